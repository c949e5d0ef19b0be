/**
 * Holding nodes: the emulator's switch that makes a running job stand still at a node until a test lets it go, so a
 * test can look at a job "while it runs" without racing it. A node delay long enough for a loaded machine slows a
 * fast one, and one short enough for a fast machine is missed by a loaded one; a hold lasts exactly as long as the
 * test needs. Not part of the contract (the service has nothing like it).
 *
 * A {@link HoldPlan} says which nodes hold: every node (`{}`), or only those of some class types (`classTypes`)
 * and/or with some node ids (`nodeIds`). A node holds when it starts: after the runner published the progress
 * snapshot that names it (`current_node` = it, `nodes_done` = its index, so `value` = index / total; the previews
 * of the nodes before it already sent), before its node delay and before it executes. It stays held until
 * - it is released ({@link NodeHolds.release}: every held node, or those of one job), then it executes; with the
 *   plan still in force the next node that matches holds in turn;
 * - the plan is cleared (`setPlan(null)`): every held node goes on, and no node holds any more;
 * - its job is canceled or leaves retention: the job's abort ends the wait, as it ends a node delay, and the job
 *   ends `canceled` as usual;
 * - the emulator closes.
 * Replacing the plan leaves the nodes already held where they are. Every job, v2 or v1 (a v1 prompt's id is its
 * job's id), runs through the same runner and so holds the same way.
 */
import { isPlainObject } from '../core/util/workflow';

/** Which nodes hold when they start: every node, or those matching `classTypes` or `nodeIds` (either matches). */
export interface HoldPlan {
  /** Hold the nodes of these class types (e.g. `["SaveImage"]`). */
  readonly classTypes?: readonly string[];
  /** Hold the nodes with these ids (workflow keys, e.g. `["2"]`). */
  readonly nodeIds?: readonly string[];
}

/** A node held at its start. */
export interface HeldNode {
  /** The job's id (a v1 prompt's `prompt_id`). */
  readonly jobId: string;
  readonly nodeId: string;
  readonly classType: string;
  /** 0-based position of the node in the job's execution order; the job's progress `value` is `index / total`. */
  readonly index: number;
  /** Nodes the job executes. */
  readonly total: number;
  /** When it was held: ISO 8601, the emulator's clock. */
  readonly since: string;
}

/** What `GET /__emulator/holds` answers: the plan in force (null: none) and the nodes held now, oldest first. */
export interface HoldState {
  readonly plan: HoldPlan | null;
  readonly held: readonly HeldNode[];
}

/**
 * Checks a hold plan (the body of `POST /__emulator/holds`, or the library's argument) and returns it in canonical
 * form (only the fields given).
 * @throws TypeError saying what is wrong: not an object, an unknown field, a list that is not of non-empty strings.
 */
export function checkHoldPlan(raw: unknown): HoldPlan {
  if (!isPlainObject(raw))
    throw new TypeError(
      `a hold plan is an object {"classTypes"?: [...], "nodeIds"?: [...]} ({} holds every node); got ${JSON.stringify(raw)}`,
    );
  const unknown = Object.keys(raw).filter((k) => k !== 'classTypes' && k !== 'nodeIds');
  if (unknown.length > 0)
    throw new TypeError(`hold plan: unknown field ${JSON.stringify(unknown[0])} (there are classTypes and nodeIds)`);
  const list = (name: 'classTypes' | 'nodeIds'): string[] | undefined => {
    const value = raw[name];
    if (value === undefined) return undefined;
    if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === 'string' && v !== '')) {
      throw new TypeError(
        `hold plan: ${name} must be a non-empty list of non-empty strings; got ${JSON.stringify(value)}`,
      );
    }
    return [...(value as string[])];
  };
  const classTypes = list('classTypes');
  const nodeIds = list('nodeIds');
  return { ...(classTypes === undefined ? {} : { classTypes }), ...(nodeIds === undefined ? {} : { nodeIds }) };
}

/** Whether `plan` holds the node `nodeId` of class `classType`. */
function holds(plan: HoldPlan, nodeId: string, classType: string): boolean {
  if (plan.classTypes === undefined && plan.nodeIds === undefined) return true;
  return (plan.classTypes?.includes(classType) ?? false) || (plan.nodeIds?.includes(nodeId) ?? false);
}

interface Waiting {
  readonly node: HeldNode;
  readonly go: () => void;
}

/** The holds of one emulator: the plan, the nodes held, and the waits of the runner. */
export class NodeHolds {
  private plan: HoldPlan | null = null;
  private readonly waiting: Waiting[] = [];
  /** Called with each node held; with undefined when the emulator closes. */
  private readonly listeners = new Set<(node: HeldNode | undefined) => void>();
  private closed = false;

  /** @param now the emulator's clock (ms since the epoch), for `since`. */
  constructor(private readonly now: () => number) {}

  /**
   * Sets the plan (checked, see {@link checkHoldPlan}); null clears it and lets every held node go on.
   * @throws TypeError for an invalid plan (the plan in force is kept).
   */
  setPlan(plan: unknown): void {
    if (plan === null) {
      this.plan = null;
      this.release();
      return;
    }
    this.plan = checkHoldPlan(plan);
  }

  /** The plan in force and the nodes held now. */
  state(): HoldState {
    return { plan: this.plan, held: this.waiting.map((w) => w.node) };
  }

  /** Lets the held nodes of job `jobId` (all held nodes when undefined) go on. @returns the nodes released. */
  release(jobId?: string): HeldNode[] {
    const released: HeldNode[] = [];
    for (const w of [...this.waiting]) {
      if (jobId !== undefined && w.node.jobId !== jobId) continue;
      this.remove(w);
      released.push(w.node);
      w.go();
    }
    return released;
  }

  /**
   * Resolves with the first held node `match` accepts (every node when undefined): one held now, or the next one
   * held. For a test in the emulator's process; over HTTP, `GET /__emulator/holds` answers the same.
   * @throws Error (rejects) when the emulator closes first.
   */
  whenHeld(match: (node: HeldNode) => boolean = () => true): Promise<HeldNode> {
    const now = this.waiting.find((w) => match(w.node));
    if (now !== undefined) return Promise.resolve(now.node);
    if (this.closed) return Promise.reject(new Error('the emulator is closing'));
    return new Promise<HeldNode>((resolve, reject) => {
      const listener = (node: HeldNode | undefined): void => {
        if (node === undefined) {
          this.listeners.delete(listener);
          reject(new Error('the emulator is closing'));
        } else if (match(node)) {
          this.listeners.delete(listener);
          resolve(node);
        }
      };
      this.listeners.add(listener);
    });
  }

  /**
   * The runner's hook: resolves at once when the plan does not hold this node, else once it is released.
   * @throws the `signal`'s reason (rejects) when the job is aborted while held (cancel, retention, closing).
   */
  wait(
    jobId: string,
    step: { readonly nodeId: string; readonly classType: string },
    index: number,
    total: number,
    signal: AbortSignal,
  ): Promise<void> {
    signal.throwIfAborted();
    if (this.plan === null || this.closed || !holds(this.plan, step.nodeId, step.classType)) return Promise.resolve();
    const node: HeldNode = {
      jobId,
      nodeId: step.nodeId,
      classType: step.classType,
      index,
      total,
      since: new Date(this.now()).toISOString(),
    };
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.remove(entry);
        reject(signal.reason);
      };
      const entry: Waiting = {
        node,
        go: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
      for (const listener of [...this.listeners]) listener(node);
    });
  }

  /** Lets every held node go on and holds no more; pending {@link whenHeld} calls reject. The emulator is closing. */
  close(): void {
    this.closed = true;
    this.plan = null;
    this.release();
    for (const listener of [...this.listeners]) listener(undefined);
    this.listeners.clear();
  }

  private remove(entry: Waiting): void {
    const at = this.waiting.indexOf(entry);
    if (at >= 0) this.waiting.splice(at, 1);
  }
}
