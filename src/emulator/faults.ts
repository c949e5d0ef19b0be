/**
 * Fault injection: the hook point where a test makes the emulator misbehave on purpose (an error answer,
 * a dropped connection), consulted by the server before a matched route runs. The rules that decide when
 * to fire are a later issue; today the emulator runs with {@link NO_FAULTS}.
 */
import type { EmulatorError } from './errors';

/** The request a fault decides on (path without the mount prefix). */
export interface FaultRequest {
  readonly method: string;
  readonly path: string;
  /** The route's name, e.g. `submitJob`. */
  readonly route: string;
  readonly owner: string;
}

/** What a fault does instead of the route: answer with an error (e.g. 429 with Retry-After), or drop the connection. */
export type FaultAction = { readonly kind: 'error'; readonly error: EmulatorError } | { readonly kind: 'drop' };

/** Decides, per request, whether a fault replaces the route. */
export interface Faults {
  before(request: FaultRequest): FaultAction | undefined;
}

/** No faults: every request reaches its route. */
export const NO_FAULTS: Faults = { before: () => undefined };
