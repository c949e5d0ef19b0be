/**
 * Response shapes (zod). Rules: jobs-assets-api-v2.md, "Resources and their fields"; FACTS.md, "v2 jobs".
 * Tolerant when reading: unknown fields are kept (loose objects), unknown status values are kept and treated
 * as in flight, optional inner fields may be missing or null.
 * Written with `zod/mini` (functions instead of methods, tree-shaken): the extension loads a few KB of zod instead
 * of the whole library (issue 8, "Speed and size": at most 150 KB loaded at activation).
 */
import type * as Z from 'zod/mini';
import { exposed, lazyBuilder } from '../lazySchema';

type Zod = typeof import('./zodParts');
/** The zod/mini functions the shapes use (zodParts.ts), required on first use: the extension's bundle keeps them in a
 * file of its own (esbuild.mjs, dist/lib), so activation does not load them (issue 8: at most 150 KB at activation). */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a lazy load, see above
const lazy = lazyBuilder<Zod>(() => require('./zodParts') as Zod);

// Non-essential fields: an odd value (a number where a string was due, an object for a count) reads as null, never
// fails the whole answer (issue 7: "only `id` and `status` are essential").
const nullableString = (z: Zod) => z.catch(z.nullish(z.string()), null);
const nullableInt = (z: Zod) => z.catch(z.nullish(z.number()), null);

/** `progress`: FACTS.md — value 0..1, nodes_done, nodes_total; optional current_node, step, steps, message. */
const progressSchema = lazy((z) =>
  z.looseObject({
  value: z.catch(z.nullish(z.number()), null),
  nodes_done: nullableInt(z),
  nodes_total: nullableInt(z),
  current_node: nullableString(z),
  current_node_class: nullableString(z),
  step: nullableInt(z),
  steps: nullableInt(z),
  message: nullableString(z),
}),
);
export const ProgressSchema = exposed(progressSchema);
export type Progress = Z.output<ReturnType<typeof progressSchema>>;

/** An `outputs[]` item: an asset (FACTS.md). Its `id` is essential (it names the content); the rest may be odd. */
const outputSchema = lazy((z) =>
  z.looseObject({
  id: z.string().check(z.minLength(1)),
  node_id: nullableString(z),
  name: nullableString(z),
  type: nullableString(z),
  content_type: nullableString(z),
  size_bytes: nullableInt(z),
  hash: nullableString(z),
  url: nullableString(z),
  url_expires_at: nullableString(z),
  job_id: nullableString(z),
}),
);
export const OutputSchema = exposed(outputSchema);
export type JobOutput = Z.output<ReturnType<typeof outputSchema>>;

/** `error` of a failed job (FACTS.md): code, message; optional node_id, class_type, traceback. A bare string is read
 * as the message. */
const jobErrorSchema = lazy((z) =>
  z.pipe(
  z.transform((v: unknown) => (typeof v === 'string' ? { message: v } : v)),
  z.looseObject({
    code: nullableString(z),
    message: nullableString(z),
    node_id: nullableString(z),
    class_type: nullableString(z),
    traceback: z.optional(z.unknown()),
  }),
),
);
export const JobErrorSchema = exposed(jobErrorSchema);
export type JobError = Z.output<ReturnType<typeof jobErrorSchema>>;

/** The items of `raw` that fit `schema`; anything that is not an array is no item (tolerant reading). */
function itemsOf<T>(schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } }, raw: unknown): T[] {
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((item) => {
    const r = schema.safeParse(item);
    return r.success ? [r.data] : [];
  });
}

/** The entries of a map whose values fit `keep`; anything that is not a plain object is no map. */
function entriesOf<T>(raw: unknown, keep: (v: unknown) => v is T): Record<string, T> | null {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return null;
  return Object.fromEntries(Object.entries(raw as Record<string, unknown>).filter((e): e is [string, T] => keep(e[1])));
}

/**
 * The Job resource. Only `id` and `status` are essential (issue 7): an odd value elsewhere is read as null or
 * dropped (`urls.cancel: null` drops that link, a metric that is not a number is dropped, an output without an id
 * is skipped), so a GET of such a job still works. `urls` keys per FACTS.md: self, events, cancel (others kept).
 */
const jobSchema = lazy((z) =>
  z.looseObject({
  id: z.string().check(z.minLength(1)),
  status: z.string().check(z.minLength(1)),
  created_at: nullableString(z),
  started_at: nullableString(z),
  completed_at: nullableString(z),
  expires_at: nullableString(z),
  queue_position: nullableInt(z),
  progress: z.catch(z.nullish(progressSchema()), null),
  outputs: z.pipe(z.optional(z.unknown()), z.transform((v) => itemsOf(OutputSchema, v))),
  error: z.catch(z.nullish(jobErrorSchema()), null),
  urls: z.pipe(z.optional(z.unknown()), z.transform((v) => entriesOf(v, (x): x is string => typeof x === 'string' && x.length > 0))),
  // Absent (never null) when there is none; inner structure not shown, so kept as is.
  logs: z.optional(z.unknown()),
  // Integer-or-null values; nulls are kept (the document: a metric not yet available is null, not omitted).
  metrics: z.pipe(z.optional(z.unknown()), z.transform((v) => entriesOf(v, (x): x is number | null => x === null || (typeof x === 'number' && Number.isFinite(x))))),
}),
);
export const JobSchema = exposed(jobSchema);
export type Job = Z.output<ReturnType<typeof jobSchema>>;

/** GET /api/v2/jobs/{id}/workflow: the client always branches on `format`. */
const workflowResponseSchema = lazy((z) =>
  z.looseObject({
  workflow: z.record(z.string(), z.unknown()),
  format: z.string(),
}),
);
export const WorkflowResponseSchema = exposed(workflowResponseSchema);
export type WorkflowResponse = Z.output<ReturnType<typeof workflowResponseSchema>>;

/** The error envelope. */
const errorEnvelopeSchema = lazy((z) =>
  z.looseObject({
  error: z.looseObject({
    code: z.string(),
    message: z.string(),
    details: z.nullish(z.record(z.string(), z.unknown())),
  }),
}),
);
export const ErrorEnvelopeSchema = exposed(errorEnvelopeSchema);

/** Event `status`: `{status, queue_position}` (FACTS.md). */
const statusEventSchema = lazy((z) =>
  z.looseObject({ status: z.string().check(z.minLength(1)), queue_position: nullableInt(z) }),
);
export const StatusEventSchema = exposed(statusEventSchema);
/** Event `preview`: `{node_id, content_type, data_base64}` (FACTS.md). */
const previewEventSchema = lazy((z) =>
  z.looseObject({
  node_id: nullableString(z),
  content_type: z._default(z.string(), 'image/jpeg'),
  data_base64: z.string(),
}),
);
export const PreviewEventSchema = exposed(previewEventSchema);
export type Preview = Z.output<ReturnType<typeof previewEventSchema>>;

/** The self-hosted companion's listing `GET /api/v2/jobs` (FACTS.md). */
const jobListSchema = lazy((z) =>
  z.looseObject({ jobs: z.pipe(z.array(z.unknown()), z.transform((v) => itemsOf(JobSchema, v))), truncated: z.catch(z.optional(z.boolean()), undefined) }),
);
export const JobListSchema = exposed(jobListSchema);

/** The asset record (FACTS.md "v2 assets"); `hash` may be null (computed lazily). Only `id` is essential. */
const assetSchema = lazy((z) =>
  z.looseObject({
  id: z.string().check(z.minLength(1)),
  hash: nullableString(z),
  size_bytes: nullableInt(z),
  content_type: nullableString(z),
  created_at: nullableString(z),
  url: nullableString(z),
  url_expires_at: nullableString(z),
  file_path: nullableString(z),
  created_new: z.catch(z.nullish(z.boolean()), null),
  expires_at: nullableString(z),
  job_id: nullableString(z),
}),
);
export const AssetSchema = exposed(assetSchema);
export type Asset = Z.output<ReturnType<typeof assetSchema>>;
