/**
 * The layout worker's messages (./layoutWorker.ts runs {@link handleLayoutMessage} on each; ./layoutClient.ts sends
 * them and reads the answers). Pure (no DOM, no worker globals), so it runs in plain Node as well.
 *
 * The page sends `{ type: 'layout', seq, input }`; the worker answers `{ type: 'layout', seq, positions }` (the
 * top-left corners of `input.nodes`, as layoutPositions returns them), or `{ type: 'layoutFailed', seq, message }`
 * when dagre threw. `seq` is the page's number for the request, sent back so the page can tell an answer to an older
 * request from one to the newest: an older one never replaces a newer one (./layoutClient.ts).
 */
import { layoutPositions, type LayoutInput } from './layout';

/** A request to lay out `input`; `seq` grows with every request the page makes. */
export interface LayoutRequest {
  type: 'layout';
  seq: number;
  input: LayoutInput;
}

/** The worker's answer to request `seq`. */
export type LayoutResponse =
  { type: 'layout'; seq: number; positions: number[] } | { type: 'layoutFailed'; seq: number; message: string };

const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** True when `data` is a well-formed {@link LayoutRequest} (the worker checks what it is posted before laying out). */
export function isLayoutRequest(data: unknown): data is LayoutRequest {
  if (typeof data !== 'object' || data === null) return false;
  const r = data as Partial<LayoutRequest>;
  const input = r.input as Partial<LayoutInput> | undefined;
  return (
    r.type === 'layout' &&
    isFiniteNumber(r.seq) &&
    typeof input === 'object' &&
    input !== null &&
    (input.direction === 'LR' || input.direction === 'TB') &&
    Array.isArray(input.nodes) &&
    input.nodes.every(
      (n: unknown) =>
        typeof n === 'object' &&
        n !== null &&
        typeof (n as { id?: unknown }).id === 'string' &&
        isFiniteNumber((n as { width?: unknown }).width) &&
        isFiniteNumber((n as { height?: unknown }).height),
    ) &&
    Array.isArray(input.edges) &&
    input.edges.every(
      (e: unknown) => Array.isArray(e) && e.length === 2 && typeof e[0] === 'string' && typeof e[1] === 'string',
    )
  );
}

/**
 * The worker's whole job: the answer to one posted message. A {@link LayoutRequest} is laid out (dagre, synchronously)
 * and answered with its positions, or with `layoutFailed` and dagre's message when it threw; anything else is not
 * answered (undefined).
 */
export function handleLayoutMessage(data: unknown): LayoutResponse | undefined {
  if (!isLayoutRequest(data)) return undefined;
  try {
    return { type: 'layout', seq: data.seq, positions: layoutPositions(data.input) };
  } catch (e) {
    return { type: 'layoutFailed', seq: data.seq, message: e instanceof Error ? e.message : String(e) };
  }
}

/** `data` as a {@link LayoutResponse}, or undefined when it is not one (the page checks the worker's answers too). */
export function parseLayoutResponse(data: unknown): LayoutResponse | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const r = data as { type?: unknown; seq?: unknown; positions?: unknown; message?: unknown };
  if (!isFiniteNumber(r.seq)) return undefined;
  if (r.type === 'layout' && Array.isArray(r.positions) && r.positions.every(isFiniteNumber))
    return { type: 'layout', seq: r.seq, positions: r.positions };
  if (r.type === 'layoutFailed' && typeof r.message === 'string')
    return { type: 'layoutFailed', seq: r.seq, message: r.message };
  return undefined;
}
