/**
 * Shapes built on first use (at most 150 KB loaded at activation). Each shape module requires its own
 * `zodParts` (a literal `require` the bundler maps to a file of its own) through {@link lazyBuilder}, and exposes its
 * shapes with {@link exposed}, so no zod code runs, or is even loaded, before the first response is read.
 */
import type * as Z from 'zod/mini';

/** What the rest of the core uses of a shape: `safeParse` and `parse`, building it on first use. */
export interface LazySchema<T> {
  safeParse(value: unknown): { success: true; data: T } | { success: false; error: { message: string; issues?: readonly { path: readonly PropertyKey[]; message: string }[] } };
  parse(value: unknown): T;
}

/**
 * Given how to load the zod functions (called once, at the first build), returns `lazy`: `lazy(build)` is a function
 * that builds its schema from those functions on first call and keeps it.
 */
export function lazyBuilder<Parts>(load: () => Parts): <T>(build: (z: Parts) => T) => () => T {
  let parts: Parts | undefined;
  return <T>(build: (z: Parts) => T) => {
    let built: T | undefined;
    return () => (built ??= build((parts ??= load())));
  };
}

/** A schema built on first use, as a {@link LazySchema}. */
export function exposed<S extends Z.ZodMiniType>(schema: () => S): LazySchema<Z.output<S>> {
  return {
    safeParse: (value) => schema().safeParse(value) as ReturnType<LazySchema<Z.output<S>>['safeParse']>,
    parse: (value) => schema().parse(value) as Z.output<S>,
  };
}
