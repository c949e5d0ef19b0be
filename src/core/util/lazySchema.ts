/**
 * Shapes built at their first use. A shape module builds each shape inside {@link lazy} (`lazy(() =>
 * z.looseObject({…}))`, zod/mini called directly) and exposes it with {@link exposed}, so loading the module builds
 * no zod object: the extension's activation does not pay for the shapes of answers it has not read yet (about 3 ms of
 * CPU, measured by `npm run bench -- activation`).
 */
import type * as Z from 'zod/mini';

/** What the rest of the core uses of a shape: `safeParse` and `parse`, building it on first use. */
interface LazySchema<T> {
  safeParse(value: unknown):
    | { success: true; data: T }
    | {
        success: false;
        error: { message: string; issues?: readonly { path: readonly PropertyKey[]; message: string }[] };
      };
  parse(value: unknown): T;
}

/** `build` called once, at the first call of the function returned; later calls return the same schema. */
export function lazy<T>(build: () => T): () => T {
  let built: { value: T } | undefined;
  return () => (built ??= { value: build() }).value;
}

/** A schema built on first use, as a {@link LazySchema}. */
export function exposed<S extends Z.ZodMiniType>(schema: () => S): LazySchema<Z.output<S>> {
  return {
    safeParse: (value) => schema().safeParse(value) as ReturnType<LazySchema<Z.output<S>>['safeParse']>,
    parse: (value) => schema().parse(value) as Z.output<S>,
  };
}

/**
 * `value` as `schema` reads it, typed as `T` (a message type written out beside its schema), or undefined when it is
 * not one: how a webview's protocol drops what it does not accept, on either side.
 */
export function parsedOrUndefined<T>(
  schema: { safeParse(value: unknown): { success: boolean; data?: unknown } },
  value: unknown,
): T | undefined {
  const r = schema.safeParse(value);
  return r.success ? (r.data as T) : undefined;
}
