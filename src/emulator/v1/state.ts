/**
 * What the v1 surface keeps besides the shared job and asset stores: its prompts (jobs submitted through
 * POST /api/prompt, the same JobRecords as v2's), the flat file names it gave to uploads and outputs (so that
 * `/api/view` and LoadImage can find them), and the status vocabulary the status endpoint speaks.
 *
 * Storage is flat and content-addressed (Cloud API v1 (deprecated), Resources and their fields): a file's name is the
 * blake3 hex of its bytes plus its extension, so that a name always means one content and two jobs' outputs
 * never share a name; `subfolder` is accepted and ignored.
 */
import type { JobRecord } from '../v2/jobs';
import type { JobStatus } from '../v2/wire';

/**
 * The two status vocabularies of GET /api/job/{id}/status:
 * - `document` (default): Cloud API v1 (deprecated), States and transitions: `queued_waiting`, `executing`,
 *   `cancel_requested` in flight; `success`, `error`, `cancelled`, `lost` terminal;
 * - `public`: the public OpenAPI's `pending`, `in_progress` in flight; `completed`, `error`,
 *   `cancelled` terminal.
 */
export type StatusVocabulary = 'document' | 'public';

const DOCUMENT_STATUS: Readonly<Record<JobStatus, string>> = {
  queued: 'queued_waiting',
  running: 'executing',
  canceling: 'cancel_requested',
  succeeded: 'success',
  failed: 'error',
  canceled: 'cancelled',
  expired: 'lost',
};

const PUBLIC_STATUS: Readonly<Record<JobStatus, string>> = {
  queued: 'pending',
  running: 'in_progress',
  // The public enum has no transitional cancel state: still in progress until it ends.
  canceling: 'in_progress',
  succeeded: 'completed',
  failed: 'error',
  canceled: 'cancelled',
  // The public enum has no `lost`: a job that disappeared failed.
  expired: 'error',
};

/** The v1 status of a job status in `vocabulary`. */
export function v1Status(status: JobStatus, vocabulary: StatusVocabulary): string {
  return (vocabulary === 'public' ? PUBLIC_STATUS : DOCUMENT_STATUS)[status];
}

/** The status of GET /api/jobs/{id} (reference/openapi-cloud-v1.yaml JobDetailResponse: pending|in_progress|completed|failed|cancelled). */
export function jobsEndpointStatus(status: JobStatus): string {
  switch (status) {
    case 'queued':
      return 'pending';
    case 'running':
    case 'canceling':
      return 'in_progress';
    case 'succeeded':
      return 'completed';
    case 'canceled':
      return 'cancelled';
    case 'failed':
    case 'expired':
      return 'failed';
  }
}

/**
 * A file reference as v1 writes it (`executed` outputs, `original_ref`): Cloud API v1 (deprecated), Resources and their
 * fields.
 */
export interface FileRef {
  readonly filename: string;
  readonly subfolder: string;
  /** `output` (SaveImage), `temp` (PreviewImage) or `input` (uploads). */
  readonly type: string;
}

/** One entry of a history's `status.messages`: `[event type, data]`, as the engine keeps them. */
type HistoryMessage = [string, Record<string, unknown>];

/** A job submitted through POST /api/prompt. */
export interface V1Job {
  readonly record: JobRecord;
  readonly owner: string;
  /** The `number` of the answer. */
  readonly number: number;
  /** The prompt as submitted (LoadImage names, not the engine's references). */
  readonly prompt: Record<string, unknown>;
  /** The job's last status, as the tap saw it (kept after the job left the store: `lost`). */
  lastStatus: JobStatus;
  /** Nodes that started (their first progress snapshot); a second snapshot of one means it finished. */
  readonly started: Set<string>;
  /** Outputs of a node not yet announced by `executed` (its node has not finished). */
  readonly pending: Map<string, FileRef[]>;
  /** Outputs per node, announced (GET /api/jobs/{id}, /api/history_v2/{id}). */
  readonly outputs: Map<string, FileRef[]>;
  /** `execution_*` messages, for the history's `status.messages`. */
  readonly messages: HistoryMessage[];
  /** Node ids in execution order that finished. */
  readonly executed: string[];
  /** A status value the status endpoint answers instead of the real one (tests: unknown or rare values). */
  forcedStatus: string | undefined;
}

/** A file the v1 surface named: which asset holds it, and its kind. */
interface NamedFile {
  readonly assetId: string;
  readonly type: string;
}

/** What a test can see of a submission: the partner key as received (never logged), the client id. */
export interface V1PromptRecord {
  readonly promptId: string;
  readonly owner: string;
  /** `extra_data.api_key_svc_org` (or the public `api_key_comfy_org`) as received; null when none was given. */
  readonly partnerKey: string | null;
  /** The keys of `extra_data` as received. */
  readonly extraDataKeys: readonly string[];
  /** `client_id` of the body, when given (accepted and ignored, as the engine's clients send it). */
  readonly clientId: string | null;
}

/** The v1 registry of one emulator. */
export class V1State {
  readonly jobs = new Map<string, V1Job>();
  readonly prompts: V1PromptRecord[] = [];
  private readonly files = new Map<string, Map<string, NamedFile>>();
  private counter = 0;

  constructor(public vocabulary: StatusVocabulary) {}

  /** The next prompt number (1, 2, …). */
  nextNumber(): number {
    return ++this.counter;
  }

  /** Job `id` when it was submitted through v1 by `owner`. */
  job(owner: string, id: string): V1Job | undefined {
    const job = this.jobs.get(id);
    return job?.owner === owner ? job : undefined;
  }

  /** Names file `name` of `owner` as asset `assetId`. */
  nameFile(owner: string, name: string, file: NamedFile): void {
    let files = this.files.get(owner);
    if (files === undefined) this.files.set(owner, (files = new Map()));
    files.set(name, file);
  }

  /** File `name` of `owner`. */
  file(owner: string, name: string): NamedFile | undefined {
    return this.files.get(owner)?.get(name);
  }

  /** The names of `owner`'s uploads of type `input`, in upload order (LoadImage's choices). */
  inputNames(owner: string): string[] {
    return [...(this.files.get(owner) ?? new Map<string, NamedFile>()).entries()]
      .filter(([, f]) => f.type === 'input')
      .map(([name]) => name);
  }
}

/** A flat, content-addressed file name: the hex of `blake3:<hex>` plus `extension` (with its dot). */
export function contentName(hash: string, extension: string): string {
  return `${hash.replace(/^blake3:/, '')}${extension}`;
}
