/**
 * The Job and Asset API v2's wire shapes (schemas.ts) mapped into the client's job model (core/jobs): the one place
 * that knows both. The statuses are the model's own words, so they pass unchanged; fields are renamed; an output's
 * `url` is resolved against the request that carried it (Job and Asset API v2, design rule 4 and Job `urls`: a
 * host-relative link is resolved against the request's origin, never against the configured base URL), so the model
 * holds where its bytes are, whoever asks later.
 */
import type { Job, JobError, JobOutput, Preview, Progress } from '../jobs/model';
import type { JobAnswer, JobUpdate } from '../jobs/backend';
import { resolveLink } from '../http/linkResolution';
import type { JobSnapshot } from './jobs';
import type {
  Job as WireJob,
  JobError as WireJobError,
  JobOutput as WireOutput,
  Preview as WirePreview,
  Progress as WireProgress,
} from './schemas';
import type { WatchUpdate } from './events';

/** The name of this API in the model ({@link Job.api}). */
export const V2_API = 'v2';

/** A `progress` object in the model's fields (Job and Asset API v2, Job `progress`: value, nodes_done, nodes_total, current_node, …). */
export function progressOf(p: WireProgress): Progress {
  return {
    value: p.value ?? null,
    nodesDone: p.nodes_done ?? null,
    nodesTotal: p.nodes_total ?? null,
    currentNode: p.current_node ?? null,
    currentNodeClass: p.current_node_class ?? null,
    step: p.step ?? null,
    steps: p.steps ?? null,
    message: p.message ?? null,
  };
}

/**
 * An `outputs[]` item in the model's fields. `url`, when given, is resolved against `source` (the URL of the request
 * whose answer carried it); a link that cannot be resolved is kept as sent (its download then fails as it would have).
 */
export function outputOf(o: WireOutput, source: URL | undefined): JobOutput {
  let url = o.url ?? null;
  if (url !== null && source) {
    try {
      url = resolveLink(url, source).href;
    } catch {
      // kept as sent
    }
  }
  return {
    id: o.id,
    nodeId: o.node_id ?? null,
    name: o.name ?? null,
    type: o.type ?? null,
    contentType: o.content_type ?? null,
    sizeBytes: o.size_bytes ?? null,
    hash: o.hash ?? null,
    url,
  };
}

/** An `error` object in the model's fields (Job and Asset API v2, Job `error`: code, message, node_id, class_type, traceback). */
function jobErrorOf(e: WireJobError): JobError {
  return {
    code: e.code ?? null,
    message: e.message ?? null,
    nodeId: e.node_id ?? null,
    classType: e.class_type ?? null,
    ...(e.traceback !== undefined ? { traceback: e.traceback } : {}),
  };
}

/** A `preview` event in the model's fields. */
function previewOf(p: WirePreview): Preview {
  return { nodeId: p.node_id ?? null, contentType: p.content_type, dataBase64: p.data_base64 };
}

/** A Job resource in the model ({@link Job}): fields renamed, outputs' links resolved against `source`, `urls` dropped. */
export function jobOf(wire: WireJob, source: URL | undefined): Job {
  return {
    id: wire.id,
    api: V2_API,
    status: wire.status,
    createdAt: wire.created_at ?? null,
    startedAt: wire.started_at ?? null,
    completedAt: wire.completed_at ?? null,
    expiresAt: wire.expires_at ?? null,
    queuePosition: wire.queue_position ?? null,
    progress: wire.progress ? progressOf(wire.progress) : null,
    outputs: wire.outputs.map((o) => outputOf(o, source)),
    error: wire.error ? jobErrorOf(wire.error) : null,
    ...(wire.logs !== undefined ? { logs: wire.logs } : {}),
    metrics: { ...(wire.metrics ?? {}) },
  };
}

/** A job as one answer returned it, in the model. */
export function answerOf(snapshot: JobSnapshot): JobAnswer {
  return { job: jobOf(snapshot.job, snapshot.source), requestId: snapshot.requestId, wire: snapshot.job };
}

/** A watch update of watch.ts in the model; `source` resolves an output's link (the URL of the job's last read). */
export function updateOf(update: WatchUpdate, source: URL | undefined): JobUpdate {
  switch (update.type) {
    case 'progress':
      return { type: 'progress', progress: progressOf(update.progress) };
    case 'preview':
      return { type: 'preview', preview: previewOf(update.preview) };
    case 'output':
      return { type: 'output', output: outputOf(update.output, source) };
    default:
      return update;
  }
}

/**
 * The outputs of a model job as the v2 client downloads them (`V2Client.downloadOutputs`): a snapshot whose outputs
 * carry the model's absolute URLs (so `source` only matters for an output without one: then the asset's content
 * endpoint under the base URL is used, as for any v2 output without a `url`).
 */
export function downloadSnapshotOf(job: Job, source: URL): JobSnapshot {
  const outputs: WireOutput[] = job.outputs.map((o) => ({
    id: o.id,
    node_id: o.nodeId,
    name: o.name,
    type: o.type,
    content_type: o.contentType,
    size_bytes: o.sizeBytes,
    hash: o.hash,
    url: o.url,
    url_expires_at: null,
    job_id: job.id,
  }));
  const wire: WireJob = {
    id: job.id,
    status: job.status,
    created_at: job.createdAt,
    started_at: job.startedAt,
    completed_at: job.completedAt,
    expires_at: job.expiresAt,
    queue_position: job.queuePosition,
    progress: null,
    outputs,
    error: null,
    urls: null,
    metrics: null,
  };
  return { job: wire, source, requestId: undefined };
}
