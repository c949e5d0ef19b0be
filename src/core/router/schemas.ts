/**
 * Response shapes of the model router (zod/mini, each built at its first use like ../v2/schemas.ts). Rules: Model
 * router API, "Resources and their fields".
 * Tolerant when reading: unknown fields are kept (loose objects) and so are, as served, the values the client only
 * interprets (the billing note, `has_more`, `next_cursor`, `limit`, `input_schema_url`): an answer printed back
 * (`comfy-cloud models list --json`, `models get --json`) is the object as served. They are read through
 * {@link billingOf}, {@link inputSchemaUrlOf} and the client's ModelPage: the billing note is `yes`, `no` or `unknown`
 * (anything else `unknown`); `has_more` other than true reads as false, a `next_cursor` that is not a string as none.
 */
import * as z from 'zod/mini';
import { exposed, lazy } from '../util/lazySchema';

/** The billing note: whether a content-policy rejection is charged. */
export type ChargesOnPolicyRejection = 'yes' | 'no' | 'unknown';

const entryShape = () => ({
  id: z.string().check(z.minLength(1)),
  provider: z.string(),
  model: z.string(),
  // `{charges_on_policy_rejection}` as served: read with billingOf().
  billing: z.optional(z.unknown()),
});

const entrySchema = lazy(() => z.looseObject(entryShape()));
/** A catalog entry: `id` (`provider/model`), `provider`, `model`, optional `billing.charges_on_policy_rejection`. */
export type ModelEntry = z.output<ReturnType<typeof entrySchema>>;

const detailSchema = lazy(() => z.looseObject({ ...entryShape(), input_schema_url: z.optional(z.unknown()) }));
/** A model detail: the entry plus an optional `input_schema_url` (read with inputSchemaUrlOf()). */
export type ModelDetail = z.output<ReturnType<typeof detailSchema>>;
export const ModelDetailSchema = exposed(detailSchema);

const pageSchema = lazy(() =>
  z.looseObject({
    data: z.array(entrySchema()),
    has_more: z.optional(z.unknown()),
    next_cursor: z.optional(z.unknown()),
    limit: z.optional(z.unknown()),
  }),
);
/** A catalog page as served: `{data, has_more, next_cursor?, limit}` (the client's ModelPage reads the last three). */
export type ModelPageBody = z.output<ReturnType<typeof pageSchema>>;
export const ModelPageSchema = exposed(pageSchema);

/** The billing note of an entry: `yes`, `no` or `unknown` (anything else, or none, is read as `unknown`). */
export function billingOf(entry: { billing?: unknown }): ChargesOnPolicyRejection {
  const billing = entry.billing;
  const note =
    typeof billing === 'object' && billing !== null
      ? (billing as { charges_on_policy_rejection?: unknown }).charges_on_policy_rejection
      : undefined;
  return note === 'yes' || note === 'no' ? note : 'unknown';
}

/** A detail's `input_schema_url` when it is a non-empty string; none otherwise (absent, null or odd). */
export function inputSchemaUrlOf(detail: { input_schema_url?: unknown }): string | undefined {
  return typeof detail.input_schema_url === 'string' && detail.input_schema_url !== ''
    ? detail.input_schema_url
    : undefined;
}
