/**
 * Response shapes of a ComfyUI server's native API (zod/mini, each built at its first use like ../v2/schemas.ts), as
 * a real server answered them (ComfyUI server API (observed)). Tolerant when reading: unknown fields kept, odd
 * non-essential values read as absent; the queue's and history's entries are kept raw and read by mapping.ts.
 */
import * as z from 'zod/mini';
import { exposed, lazy } from '../util/lazySchema';

/**
 * The answer of `POST /prompt` (Submitting): `{prompt_id, number, node_errors}`, or a refusal `{error, node_errors}`.
 * Both are read by this shape; the client tells them apart.
 */
const promptAnswerSchema = lazy(() =>
  z.looseObject({
    prompt_id: z.catch(z.optional(z.string()), undefined),
    number: z.catch(z.optional(z.number()), undefined),
    node_errors: z.optional(z.unknown()),
    error: z.optional(z.unknown()),
  }),
);
export const PromptAnswerSchema = exposed(promptAnswerSchema);

/** `GET /queue` (Reading state): `{queue_running: [entry], queue_pending: [entry]}`, each entry an array. */
const queueSchema = lazy(() =>
  z.looseObject({
    queue_running: z.catch(z.array(z.unknown()), []),
    queue_pending: z.catch(z.array(z.unknown()), []),
  }),
);
export const QueueSchema = exposed(queueSchema);
/** The server's queue: its entries raw (mapping.ts `queueEntryOf` reads them). */
export type QueueAnswer = z.output<ReturnType<typeof queueSchema>>;

/** `GET /history` and `GET /history/{id}` (Reading state): prompt id → entry (`{}` when none). */
const historySchema = lazy(() => z.record(z.string(), z.unknown()));
export const HistorySchema = exposed(historySchema);

/** `POST /upload/image` (Files): `{name, subfolder, type}`. */
const uploadResultSchema = lazy(() =>
  z.looseObject({
    name: z.string().check(z.minLength(1)),
    subfolder: z.catch(z.optional(z.string()), ''),
    type: z.catch(z.optional(z.string()), undefined),
  }),
);
export const UploadResultSchema = exposed(uploadResultSchema);
