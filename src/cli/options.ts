/**
 * Parsers of command-line option values shared by the commands. Each refuses a bad value with a
 * {@link UsageError} (exit code 2) naming the option and the expected form, before any request is made.
 */
import { UsageError } from './output';

/**
 * Parses `--input NODE.FIELD=@file` (submit): which node input receives the uploaded file's asset reference.
 * @throws UsageError naming the expected form.
 */
export function parseInputOption(value: string): { nodeId: string; field: string; file: string } {
  const m = /^([^.=]+)\.([^=]+)=@(.+)$/.exec(value);
  if (!m) throw new UsageError(`--input takes NODE.FIELD=@file, e.g. --input 1.image=@photo.png (got ${value})`);
  return { nodeId: m[1], field: m[2], file: m[3] };
}

/** Commander's accumulator of a repeatable option (`--tag a --tag b` → `['a', 'b']`). */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/**
 * A whole number from `min` to `max` (inclusive) given as option `name`.
 * @throws UsageError when `value` is not a whole number in range.
 */
export function intOption(name: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`${name} must be a whole number from ${min} to ${max} (got ${value})`);
  return n;
}

/** A whole number of seconds (0 to 7 days) given as option `name`. @throws UsageError. */
export function seconds(name: string, value: string): number {
  return intOption(name, value, 0, 7 * 24 * 3600);
}
