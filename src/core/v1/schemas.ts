/**
 * Response shapes of the v1 API (zod/mini, each built at its first use like ../v2/schemas.ts). Rules: Cloud API v1
 * (deprecated), Resources and their fields, and Endpoints (public sources: `completed` reads as success); the public OpenAPI
 * (`reference/openapi-cloud-v1.yaml`: `JobDetailResponse`, `HistoryDetailResponse`) where the document says "not
 * shown". Tolerant when reading: unknown fields kept (loose objects), odd non-essential values read as absent.
 */
import * as z from 'zod/mini';
import { exposed, lazy } from '../util/lazySchema';

const optionalString = () => z.catch(z.optional(z.string()), undefined);

/** Upload result (Cloud API v1 (deprecated), Resources and their fields): `name`, `subfolder`; `type` where the server adds it. */
const uploadResultSchema = lazy(() =>
  z.looseObject({
    name: z.string().check(z.minLength(1)),
    subfolder: z.catch(z.optional(z.string()), ''),
    type: optionalString(),
  }),
);
export const UploadResultSchema = exposed(uploadResultSchema);
/** `{name, subfolder, type?}` of an upload (extra keys such as a mask's `metadata` kept). */
export type UploadResult = z.output<ReturnType<typeof uploadResultSchema>>;

/**
 * The answer of `POST /api/prompt` (Cloud API v1 (deprecated), Endpoints; its other fields not shown there; public
 * sources: `{prompt_id, number, node_errors}` or an error body with `error` and `node_errors`). Both are read by this
 * shape; the client tells them apart.
 */
const promptAnswerSchema = lazy(() =>
  z.looseObject({
    prompt_id: optionalString(),
    number: z.catch(z.optional(z.number()), undefined),
    node_errors: z.optional(z.unknown()),
    error: z.optional(z.unknown()),
  }),
);
export const PromptAnswerSchema = exposed(promptAnswerSchema);

/**
 * `GET /api/job/{id}/status`: `status` is essential; `error_message`, `created_at` and `updated_at` (public OpenAPI)
 * kept when strings, else null.
 */
const statusAnswerSchema = lazy(() =>
  z.looseObject({
    status: z.string().check(z.minLength(1)),
    id: optionalString(),
    error_message: z.catch(z.nullish(z.string()), null),
    created_at: z.catch(z.nullish(z.string()), null),
    updated_at: z.catch(z.nullish(z.string()), null),
  }),
);
export const StatusAnswerSchema = exposed(statusAnswerSchema);
export type StatusAnswer = z.output<ReturnType<typeof statusAnswerSchema>>;

/**
 * `GET /api/jobs/{prompt_id}` (public OpenAPI `JobDetailResponse`): `outputs` keyed by node id (each a node output,
 * Cloud API v1 (deprecated), Resources and their fields), `execution_error` for a failed job. Both kept raw; mapping.ts
 * reads them.
 */
const jobDetailSchema = lazy(() =>
  z.looseObject({
    id: optionalString(),
    status: optionalString(),
    outputs: z.optional(z.unknown()),
    execution_error: z.optional(z.unknown()),
  }),
);
export const JobDetailSchema = exposed(jobDetailSchema);

/** `GET /api/history_v2/{prompt_id}` (public OpenAPI `HistoryDetailResponse`): prompt id → `{outputs, status, …}`. */
const historySchema = lazy(() => z.record(z.string(), z.unknown()));
export const HistorySchema = exposed(historySchema);

/** Any JSON object (object_info): its values are read one by one (objectInfo.ts). */
const objectSchema = lazy(() => z.record(z.string(), z.unknown()));
export const JsonObjectSchema = exposed(objectSchema);
