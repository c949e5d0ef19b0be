/**
 * Response shapes (zod). Rules: jobs-assets-api-v2.md, "Resources and their fields"; FACTS.md, "v2 jobs".
 * Tolerant when reading: unknown fields are kept (loose objects), unknown status values are kept and treated
 * as in flight, optional inner fields may be missing or null.
 */
import { z } from 'zod';

/** The document's job statuses. A server may send others; they are kept and count as in flight. */
export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'canceling', 'canceled', 'failed', 'expired'] as const;
/** A known status, or any other string a server sends. */
export type JobStatus = (typeof JOB_STATUSES)[number] | (string & {});
const TERMINAL = new Set<string>(['succeeded', 'canceled', 'failed', 'expired']);

/** Terminal states: succeeded, canceled, failed, expired (the document's "States and transitions"). */
export function isTerminalStatus(status: string): boolean {
  return TERMINAL.has(status);
}

const nullableString = z.string().nullish();
const nullableInt = z.number().nullish();

/** `progress`: FACTS.md — value 0..1, nodes_done, nodes_total; optional current_node, step, steps, message. */
export const ProgressSchema = z.looseObject({
  value: z.number().nullish(),
  nodes_done: nullableInt,
  nodes_total: nullableInt,
  current_node: nullableString,
  current_node_class: nullableString,
  step: nullableInt,
  steps: nullableInt,
  message: nullableString,
});
export type Progress = z.infer<typeof ProgressSchema>;

/** An `outputs[]` item: an asset (FACTS.md). */
export const OutputSchema = z.looseObject({
  id: z.string(),
  node_id: nullableString,
  name: nullableString,
  type: nullableString,
  content_type: nullableString,
  size_bytes: nullableInt,
  hash: nullableString,
  url: nullableString,
  url_expires_at: nullableString,
  job_id: nullableString,
});
export type JobOutput = z.infer<typeof OutputSchema>;

/** `error` of a failed job (FACTS.md): code, message; optional node_id, class_type, traceback. */
export const JobErrorSchema = z.looseObject({
  code: nullableString,
  message: nullableString,
  node_id: nullableString,
  class_type: nullableString,
  traceback: z.unknown().optional(),
});
export type JobError = z.infer<typeof JobErrorSchema>;

/** The Job resource. `urls` keys per FACTS.md: self, events, cancel (others kept). */
export const JobSchema = z.looseObject({
  id: z.string().min(1),
  status: z.string().min(1),
  created_at: nullableString,
  started_at: nullableString,
  completed_at: nullableString,
  expires_at: nullableString,
  queue_position: nullableInt,
  progress: ProgressSchema.nullish(),
  outputs: z.array(OutputSchema).nullish().transform((v) => v ?? []),
  error: JobErrorSchema.nullish(),
  urls: z.record(z.string(), z.string()).nullish(),
  // Absent (never null) when there is none; inner structure not shown, so kept as is.
  logs: z.unknown().optional(),
  // Integer-or-null values; nulls are kept (the document: a metric not yet available is null, not omitted).
  metrics: z.record(z.string(), z.number().nullable()).nullish(),
});
export type Job = z.infer<typeof JobSchema>;

/** GET /api/v2/jobs/{id}/workflow: the client always branches on `format`. */
export const WorkflowResponseSchema = z.looseObject({
  workflow: z.record(z.string(), z.unknown()),
  format: z.string(),
});
export type WorkflowResponse = z.infer<typeof WorkflowResponseSchema>;

/** The error envelope. */
export const ErrorEnvelopeSchema = z.looseObject({
  error: z.looseObject({
    code: z.string(),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).nullish(),
  }),
});

/** Event `status`: `{status, queue_position}` (FACTS.md). */
export const StatusEventSchema = z.looseObject({ status: z.string().min(1), queue_position: nullableInt });
/** Event `preview`: `{node_id, content_type, data_base64}` (FACTS.md). */
export const PreviewEventSchema = z.looseObject({
  node_id: nullableString,
  content_type: z.string().default('image/jpeg'),
  data_base64: z.string(),
});
export type Preview = z.infer<typeof PreviewEventSchema>;

/** The self-hosted companion's listing `GET /api/v2/jobs` (FACTS.md). */
export const JobListSchema = z.looseObject({ jobs: z.array(JobSchema), truncated: z.boolean().optional() });

/** The asset record (FACTS.md "v2 assets"); `hash` may be null (computed lazily). */
export const AssetSchema = z.looseObject({
  id: z.string().min(1),
  hash: nullableString,
  size_bytes: nullableInt,
  content_type: nullableString,
  created_at: nullableString,
  url: nullableString,
  url_expires_at: nullableString,
  file_path: nullableString,
  created_new: z.boolean().nullish(),
  expires_at: nullableString,
  job_id: nullableString,
});
export type Asset = z.infer<typeof AssetSchema>;
