/**
 * Response shapes (zod). Rules: Job and Asset API v2, Resources and their fields (inner fields it leaves not shown:
 * public sources).
 * Tolerant when reading: unknown fields are kept (loose objects), unknown status values are kept and treated
 * as in flight, optional inner fields may be missing or null.
 * Written with `zod/mini` (functions instead of methods): the bundles keep only the functions used, a few KB of zod
 * instead of the whole library. Each shape is built at its first use (lazySchema.ts).
 */
import * as z from 'zod/mini';
import { exposed, lazy } from '../util/lazySchema';

// Non-essential fields: an odd value (a number where a string was due, an object for a count) reads as null, never
// fails the whole answer (only `id` and `status` are essential: read tolerantly).
const nullableString = () => z.catch(z.nullish(z.string()), null);
const nullableInt = () => z.catch(z.nullish(z.number()), null);

/** `progress` (Job and Asset API v2, Job: inner fields not shown there; public sources) — value 0..1, nodes_done, nodes_total; optional current_node, step, steps, message. */
const progressSchema = lazy(() =>
  z.looseObject({
    value: z.catch(z.nullish(z.number()), null),
    nodes_done: nullableInt(),
    nodes_total: nullableInt(),
    current_node: nullableString(),
    current_node_class: nullableString(),
    step: nullableInt(),
    steps: nullableInt(),
    message: nullableString(),
  }),
);
export const ProgressSchema = exposed(progressSchema);
export type Progress = z.output<ReturnType<typeof progressSchema>>;

/** An `outputs[]` item: an asset (Job and Asset API v2, Job: fields not shown there; public sources). Its `id` is essential (it names the content); the rest may be odd. */
const outputSchema = lazy(() =>
  z.looseObject({
    id: z.string().check(z.minLength(1)),
    node_id: nullableString(),
    name: nullableString(),
    type: nullableString(),
    content_type: nullableString(),
    size_bytes: nullableInt(),
    hash: nullableString(),
    url: nullableString(),
    url_expires_at: nullableString(),
    job_id: nullableString(),
  }),
);
export const OutputSchema = exposed(outputSchema);
export type JobOutput = z.output<ReturnType<typeof outputSchema>>;

/** `error` of a failed job (inner fields not shown in Job and Asset API v2, Job; public sources): code, message;
 * optional node_id, class_type, traceback. A bare string is read
 * as the message. */
const jobErrorSchema = lazy(() =>
  z.pipe(
    z.transform((v: unknown) => (typeof v === 'string' ? { message: v } : v)),
    z.looseObject({
      code: nullableString(),
      message: nullableString(),
      node_id: nullableString(),
      class_type: nullableString(),
      traceback: z.optional(z.unknown()),
    }),
  ),
);
export type JobError = z.output<ReturnType<typeof jobErrorSchema>>;

/** The items of `raw` that fit `schema`; anything that is not an array is no item (tolerant reading). */
function itemsOf<T>(
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } },
  raw: unknown,
): T[] {
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
 * The Job resource. Only `id` and `status` are essential (read tolerantly): an odd value elsewhere is read as null or
 * dropped (`urls.cancel: null` drops that link, a metric that is not a number is dropped, an output without an id
 * is skipped), so a GET of such a job still works. `urls` keys (not shown in the document; public sources): self,
 * events, cancel (others kept).
 */
const jobSchema = lazy(() =>
  z.looseObject({
    id: z.string().check(z.minLength(1)),
    status: z.string().check(z.minLength(1)),
    created_at: nullableString(),
    started_at: nullableString(),
    completed_at: nullableString(),
    expires_at: nullableString(),
    queue_position: nullableInt(),
    progress: z.catch(z.nullish(progressSchema()), null),
    outputs: z.pipe(
      z.optional(z.unknown()),
      z.transform((v) => itemsOf(OutputSchema, v)),
    ),
    error: z.catch(z.nullish(jobErrorSchema()), null),
    urls: z.pipe(
      z.optional(z.unknown()),
      z.transform((v) => entriesOf(v, (x): x is string => typeof x === 'string' && x.length > 0)),
    ),
    // Absent (never null) when there is none; inner structure not shown, so kept as is.
    logs: z.optional(z.unknown()),
    // Integer-or-null values; nulls are kept (the document: a metric not yet available is null, not omitted).
    metrics: z.pipe(
      z.optional(z.unknown()),
      z.transform((v) =>
        entriesOf(v, (x): x is number | null => x === null || (typeof x === 'number' && Number.isFinite(x))),
      ),
    ),
  }),
);
export const JobSchema = exposed(jobSchema);
export type Job = z.output<ReturnType<typeof jobSchema>>;

/** GET /api/v2/jobs/{id}/workflow: the client always branches on `format`. */
const workflowResponseSchema = lazy(() =>
  z.looseObject({
    workflow: z.record(z.string(), z.unknown()),
    format: z.string(),
  }),
);
export const WorkflowResponseSchema = exposed(workflowResponseSchema);
export type WorkflowResponse = z.output<ReturnType<typeof workflowResponseSchema>>;

/** Event `status`: `{status, queue_position}` (Job and Asset API v2, Events, rule 7: data not shown; public sources). */
const statusEventSchema = lazy(() =>
  z.looseObject({ status: z.string().check(z.minLength(1)), queue_position: nullableInt() }),
);
export const StatusEventSchema = exposed(statusEventSchema);
/** Event `preview`: `{node_id, content_type, data_base64}` (Job and Asset API v2, Events, rule 7: not shown; public sources). */
const previewEventSchema = lazy(() =>
  z.looseObject({
    node_id: nullableString(),
    content_type: z._default(z.string(), 'image/jpeg'),
    data_base64: z.string(),
  }),
);
export const PreviewEventSchema = exposed(previewEventSchema);
export type Preview = z.output<ReturnType<typeof previewEventSchema>>;

/** The self-hosted companion's listing `GET /api/v2/jobs` (job listing is not shown in Job and Asset API v2). */
const jobListSchema = lazy(() =>
  z.looseObject({
    jobs: z.pipe(
      z.array(z.unknown()),
      z.transform((v) => itemsOf(JobSchema, v)),
    ),
    truncated: z.catch(z.optional(z.boolean()), undefined),
  }),
);
export const JobListSchema = exposed(jobListSchema);

/** The asset record (Job and Asset API v2, Asset: fields not shown there; public sources); `hash` may be null (computed lazily). Only `id` is essential. */
const assetSchema = lazy(() =>
  z.looseObject({
    id: z.string().check(z.minLength(1)),
    hash: nullableString(),
    size_bytes: nullableInt(),
    content_type: nullableString(),
    created_at: nullableString(),
    url: nullableString(),
    url_expires_at: nullableString(),
    file_path: nullableString(),
    created_new: z.catch(z.nullish(z.boolean()), null),
    expires_at: nullableString(),
    job_id: nullableString(),
  }),
);
export const AssetSchema = exposed(assetSchema);
export type Asset = z.output<ReturnType<typeof assetSchema>>;
