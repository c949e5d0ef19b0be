/**
 * The JSON shapes the emulator writes: the Job, its parts, the asset record and the event payloads
 * (Job and Asset API v2, Resources and their fields; public sources for the inner
 * fields the document leaves "not shown"). Timestamps are ISO 8601 strings in UTC.
 */

/** The document's job statuses; terminal: succeeded, canceled, failed, expired. */
export type JobStatus = 'queued' | 'running' | 'succeeded' | 'canceling' | 'canceled' | 'failed' | 'expired';

/** True for the document's terminal states. */
export function isTerminal(status: JobStatus): boolean {
  return status === 'succeeded' || status === 'canceled' || status === 'failed' || status === 'expired';
}

/** `progress`: a whole snapshot; `value` = nodes_done / nodes_total. `step`/`steps` are null (no samplers here). */
export interface WireProgress {
  value: number;
  nodes_done: number;
  nodes_total: number;
  current_node: string | null;
  current_node_class: string | null;
  step: number | null;
  steps: number | null;
  message: string | null;
}

/** Output kinds (not shown in the document; public sources). */
type OutputType = 'image' | 'video' | 'audio' | 'text' | 'file' | 'latent';

/** The output kind of a content type: `image/png` → image, and so on; anything else is a file. */
export function outputTypeOf(contentType: string): OutputType {
  const major = contentType.split('/')[0];
  if (major === 'image' || major === 'video' || major === 'audio' || major === 'text') return major;
  return 'file';
}

/** One `outputs[]` item: an asset produced by a node. `url` is the content link. */
export interface WireOutput {
  id: string;
  node_id: string;
  name: string;
  type: OutputType;
  content_type: string;
  size_bytes: number;
  /** `blake3:<hex>` (the emulator always computes it; the contract allows null). */
  hash: string | null;
  url: string;
  /** When `url` stops working: a signed URL's expiry, else the asset's; null when it does not expire. */
  url_expires_at: string | null;
  job_id: string;
}

/** `error` of a failed job. */
export interface WireJobError {
  code: string;
  message: string;
  node_id: string | null;
  class_type: string | null;
  traceback: string | null;
}

/** `urls`: absolute, or host-relative including the mount prefix. */
export interface WireJobUrls {
  self: string;
  events: string;
  cancel: string;
}

/**
 * One line of a job's `logs`. The document leaves the inner structure of `logs` unshown; the emulator's choice is an
 * object `{lines: [...]}` whose items have the reserved `log` event's fields (`level`, `message`) and a time.
 */
export interface WireLogLine {
  time: string;
  level: 'info' | 'error';
  message: string;
}

/** A job's `logs` as the emulator writes it (see {@link WireLogLine}). */
interface WireLogs {
  lines: WireLogLine[];
}

/**
 * The Job object. `logs` only on GET of a finished job of a serverless deployment (the emulator under a mount
 * prefix): Job and Asset API v2, Job, rules for `logs` 1–4; absent (never null) otherwise.
 */
export interface WireJob {
  id: string;
  status: JobStatus;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  expires_at: string;
  /** 0 = the next job to start; null unless queued. */
  queue_position: number | null;
  progress: WireProgress | null;
  outputs: WireOutput[];
  error: WireJobError | null;
  urls: WireJobUrls;
  /** Milliseconds; null while not available (queue_ms before the job leaves the queue, execution_ms before it ends). */
  metrics: { queue_ms: number | null; execution_ms: number | null };
  logs?: WireLogs;
}

/**
 * The asset record (its fields not shown in Job and Asset API v2, Asset; public sources). `hash` is always computed
 * here (the contract allows null: lazily computed). `created_new` only on the answers of upload and from-hash; `tags`
 * is an addition of ours (what the upload or mint was given).
 */
export interface WireAsset {
  id: string;
  hash: string | null;
  size_bytes: number;
  content_type: string;
  created_at: string;
  /** Short-lived where signed; fresh on every answer. */
  url: string;
  url_expires_at: string | null;
  file_path: string | null;
  tags: string[];
  /** true: new bytes for this account; false: a dedup hit. */
  created_new?: boolean;
  expires_at: string | null;
  job_id: string | null;
}

/** Event `preview`: a small PNG of the latest image. */
export interface WirePreview {
  node_id: string;
  content_type: string;
  data_base64: string;
}

/**
 * Event `status`: `{status, queue_position}`; the terminal one also carries `outputs` and `error` (the
 * OpenAPI document calls it the terminal status snapshot). Never `logs` (Events rule 5).
 */
export interface WireStatusEvent {
  status: JobStatus;
  queue_position: number | null;
  outputs?: WireOutput[];
  error?: WireJobError | null;
}

/** ISO 8601 of a millisecond timestamp. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
