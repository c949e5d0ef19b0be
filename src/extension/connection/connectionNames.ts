import { DEFAULT_CONNECTION_NAME } from '../../core/connection';

/** `name`, or `name 2`, `name 3`… : the first not in `taken` (nor the default connection's name). */
export function freeName(name: string, taken: ReadonlySet<string>): string {
  if (!taken.has(name) && name !== DEFAULT_CONNECTION_NAME) return name;
  for (let i = 2; ; i++) if (!taken.has(`${name} ${i}`)) return `${name} ${i}`;
}
