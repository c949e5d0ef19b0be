/**
 * What the ComfyUI server surface keeps besides the shared job and asset stores: its prompts (queue and history, by
 * prompt id, in submission order), the file names of its uploads and outputs, and its cache of finished prompts.
 * Held in memory only: a restart forgets queue and history (ComfyUI server API (observed), Reading state: "A restart
 * forgets everything"); the files stay in the asset store.
 */
import type { JobRecord } from '../v2/jobs';
import type { JobStatus } from '../v2/wire';
import { V1State, type FileRef } from '../v1/state';

/** One entry of a history's `status.messages`: `[event type, data]`. */
export type HistoryMessage = [string, Record<string, unknown>];

/** A prompt submitted through POST /prompt. */
export interface ComfyJob {
  readonly record: JobRecord;
  /** The `number` of the answer and the first item of queue and history entries. */
  readonly number: number;
  /** The prompt as submitted. */
  readonly prompt: Record<string, unknown>;
  /** `extra_data` as submitted, with `client_id` added (as the server keeps it). */
  readonly extraData: Record<string, unknown>;
  /** The socket that receives this prompt's messages; null: none (ComfyUI server API (observed), Following a job). */
  readonly clientId: string | null;
  /** The output node ids, in order. */
  readonly outputsToExecute: readonly string[];
  /** The key of its cache entry (the prompt as JSON). */
  readonly cacheKey: string;
  /** Set when an identical prompt succeeded before: that run's files per output node (an answer from the cache). */
  readonly cached: ReadonlyMap<string, FileRef[]> | undefined;
  /** The last status the tap saw. */
  lastStatus: JobStatus;
  /** Nodes that started, in order; a node's second progress snapshot means it finished. */
  readonly started: string[];
  /** Nodes that finished, in order. */
  readonly executed: string[];
  /** Files of a node not yet announced by `executed`. */
  readonly pending: Map<string, FileRef[]>;
  /** Files per output node, announced. */
  readonly outputs: Map<string, FileRef[]>;
  /** The `execution_*` messages, for the history's `status.messages`. */
  readonly messages: HistoryMessage[];
}

/** The ComfyUI surface's registry of one emulator run. */
export class ComfyState {
  /** Queue and history by prompt id; a prompt deleted from the queue or the history leaves it. */
  readonly jobs = new Map<string, ComfyJob>();
  /** File names of uploads and outputs (the same registry the v1 surface keeps; its prompt check reads it). */
  readonly files = new V1State('document');
  /** Prompt as JSON → the files per output node of its last successful run. */
  readonly cache = new Map<string, ReadonlyMap<string, FileRef[]>>();
  private counter = 0;

  /** The next prompt number (0, 1, …, as the server counts). */
  nextNumber(): number {
    return this.counter++;
  }

  /** Prompts not ended (queued, running, being interrupted): `queue_remaining`. */
  remaining(): number {
    let n = 0;
    for (const job of this.jobs.values()) if (!ended(job.record.status)) n++;
    return n;
  }
}

/** Whether a status is final (the prompt is in the history, or gone). */
export function ended(status: JobStatus): boolean {
  return status === 'succeeded' || status === 'failed' || status === 'canceled' || status === 'expired';
}
