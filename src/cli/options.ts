/**
 * Parsers of command-line option values shared by the commands. Each refuses a bad value with a
 * {@link UsageError} (exit code 2) naming the option and the expected form, before any request is made.
 */
import { DEFAULT_CONCURRENCY } from '../core/batch';
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
  if (!Number.isInteger(n) || n < min || n > max)
    throw new UsageError(`${name} must be a whole number from ${min} to ${max} (got ${value})`);
  return n;
}

/** A whole number of seconds (0 to 7 days) given as option `name`. @throws UsageError. */
export function seconds(name: string, value: string): number {
  return intOption(name, value, 0, 7 * 24 * 3600);
}

/** The most jobs one batch may have in flight at once (`--concurrency`). */
export const MAX_CONCURRENCY = 64;

/**
 * `--concurrency` as given (default {@link DEFAULT_CONCURRENCY}).
 * @throws UsageError unless a whole number from 1 to {@link MAX_CONCURRENCY}.
 */
export function concurrencyOption(value: string | undefined): number {
  return value === undefined ? DEFAULT_CONCURRENCY : intOption('--concurrency', value, 1, MAX_CONCURRENCY);
}

/** The most a settle window may be (s): a batch is not held for long by one lost answer. */
const MAX_SETTLE_S = 600;

/**
 * `--settle <seconds>` as ms: how long after a send its job shows in the listing (core/jobs/unknownOutcome.ts);
 * undefined when not given (the core's default, 3 s).
 * @throws UsageError unless a number of seconds from 0.1 to {@link MAX_SETTLE_S} (decimals allowed).
 */
export function settleOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const s = Number(value);
  if (value.trim() === '' || !Number.isFinite(s) || s < 0.1 || s > MAX_SETTLE_S)
    throw new UsageError(`--settle must be a number of seconds from 0.1 to ${MAX_SETTLE_S} (got ${value})`);
  return Math.round(s * 1000);
}

/** The help of `--settle`, the same on every command that takes it. */
export const SETTLE_HELP =
  "seconds after a send whose answer was lost before the server's job listing is read for its job (default 3)";
