/**
 * The monitor's deltas (protocol.ts `delta`): what the host posts of the nodes' states once the page holds them, and
 * how the page merges that into what it has. A progress event of a 500-node job then carries the job and the one or
 * two nodes that changed (a few hundred bytes) instead of every node's state (about 40 KB).
 *
 * Plain data, no `vscode`, no DOM: the host (src/extension/monitor/), the page's view model and the unit tests share it.
 */
import type { NodeRunState } from '../../graph/types';
import type { HostMessage, MonitorState, NodeStatesDelta } from './protocol';

/**
 * What changed from `before` to `after` (both by node id): the states of `after` that `before` lacks or holds
 * otherwise (compared by value), and the ids of `before` that `after` lacks. Applying it to `before`
 * ({@link applyNodeStatesDelta}) gives states equal to `after`.
 */
export function nodeStatesDelta(
  before: Readonly<Record<string, NodeRunState>>,
  after: Readonly<Record<string, NodeRunState>>,
): NodeStatesDelta {
  const changed: Record<string, NodeRunState> = {};
  for (const [id, state] of Object.entries(after)) {
    const was = Object.hasOwn(before, id) ? before[id] : undefined;
    if (was === undefined || !sameValue(was, state)) changed[id] = state;
  }
  const removed = Object.keys(before).filter((id) => !Object.hasOwn(after, id));
  return { changed, removed };
}

/** `states` with `delta` merged in: changed states replace (or add) theirs, removed ids are dropped. A new object. */
export function applyNodeStatesDelta(
  states: Readonly<Record<string, NodeRunState>>,
  delta: NodeStatesDelta,
): Record<string, NodeRunState> {
  const out: Record<string, NodeRunState> = { ...states, ...delta.changed };
  for (const id of delta.removed) delete out[id];
  return out;
}

/**
 * The host's side of the rule "a whole snapshot first, then deltas": what to post for each new state of the page.
 * - The first message after {@link reset} (the page said `ready`: it may have been written anew, or reloaded, and
 *   holds only the state embedded when it was written) is a whole `snapshot`.
 * - A message the page does not get (`delivered` false: it is not ready) is a whole `snapshot` too, and leaves the
 *   page's states unknown: the next delivered message is whole again.
 * - Otherwise a `delta`: the job, and the nodes' states changed since the last message the page got.
 */
export class MonitorPosts {
  /** The nodes' states the page holds (the last delivered message's); undefined: unknown, post a snapshot. */
  private held: Record<string, NodeRunState> | undefined;
  private latest: MonitorState | undefined;

  /** The page holds nothing known (it said `ready`, or was written again): the next message is a whole snapshot. */
  reset(): void {
    this.held = undefined;
  }

  /** The message that brings the page to `state`; `delivered` is whether the page gets it (it is ready). */
  next(state: MonitorState, delivered: boolean): HostMessage {
    this.latest = state;
    const held = this.held;
    this.held = delivered ? state.nodeStates : undefined;
    if (!delivered || held === undefined) return { type: 'snapshot', state };
    return { type: 'delta', job: state.job, nodeStates: nodeStatesDelta(held, state.nodeStates) };
  }

  /** The last state posted, whole or as a delta (what the page shows once it got it); undefined before any. */
  get last(): MonitorState | undefined {
    return this.latest;
  }
}

/** Equal as JSON data (plain objects, arrays, strings, numbers, booleans, null): a node's state is nothing else. */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  return ka.every((k) => Object.hasOwn(rb, k) && sameValue(ra[k], rb[k]));
}
