/**
 * Response shapes of the model router (zod/mini, built on first use like ../v2/schemas.ts, so the extension's
 * activation loads none of zod). Rules: Model router API, Resources and their fields (and public sources where it
 * says "not shown").
 * Tolerant when reading: unknown fields are kept (loose objects); the billing note is `yes`, `no` or `unknown`
 * (anything else `unknown`); `has_more` missing reads as false, a missing `next_cursor` as none.
 */
import type * as Z from 'zod/mini';
import { exposed, lazyBuilder, type LazySchema } from '../lazySchema';

type Zod = typeof import('./zodParts');
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a lazy load (activation loads at most 150 KB)
const lazy = lazyBuilder<Zod>(() => require('./zodParts') as Zod);

/** `safeParse` (and `parse`) of a schema built on first use. */
export type RouterSchema<T> = LazySchema<T>;

/** The billing note: whether a content-policy rejection is charged. */
export type ChargesOnPolicyRejection = 'yes' | 'no' | 'unknown';

const billingNote = (z: Zod) =>
  z.catch(
    z.pipe(
      z.unknown(),
      z.transform((v): ChargesOnPolicyRejection => (v === 'yes' || v === 'no' ? v : 'unknown')),
    ),
    'unknown' as ChargesOnPolicyRejection,
  );

const entryShape = (z: Zod) => ({
  id: z.string().check(z.minLength(1)),
  provider: z.string(),
  model: z.string(),
  billing: z.catch(z.optional(z.looseObject({ charges_on_policy_rejection: billingNote(z) })), undefined),
});

const entrySchema = lazy((z) => z.looseObject(entryShape(z)));
/** A catalog entry: `id` (`provider/model`), `provider`, `model`, optional `billing.charges_on_policy_rejection`. */
export type ModelEntry = Z.output<ReturnType<typeof entrySchema>>;
export const ModelEntrySchema = exposed(entrySchema);

const detailSchema = lazy((z) => z.looseObject({ ...entryShape(z), input_schema_url: z.catch(z.nullish(z.string()), null) }));
/** A model detail: the entry plus an optional `input_schema_url`. */
export type ModelDetail = Z.output<ReturnType<typeof detailSchema>>;
export const ModelDetailSchema = exposed(detailSchema);

const pageSchema = lazy((z) =>
  z.looseObject({
    data: z.array(entrySchema()),
    has_more: z.catch(z.optional(z.boolean()), false),
    next_cursor: z.catch(z.nullish(z.string()), null),
    limit: z.catch(z.nullish(z.number()), null),
  }),
);
/** A catalog page as served: `{data, has_more, next_cursor?, limit}`. */
export type ModelPageBody = Z.output<ReturnType<typeof pageSchema>>;
export const ModelPageSchema = exposed(pageSchema);

/** The billing note of an entry: `yes`, `no` or `unknown` (public sources: anything else, or none, is `unknown`). */
export function billingOf(entry: { billing?: { charges_on_policy_rejection?: ChargesOnPolicyRejection } | undefined }): ChargesOnPolicyRejection {
  return entry.billing?.charges_on_policy_rejection ?? 'unknown';
}
