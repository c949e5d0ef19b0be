/**
 * The router's model catalog and its paging (Model router API, GET /v1/models, and Limits; the list's other fields
 * from public sources): about 250 entries over several providers, served in a fixed but unsorted order; opaque cursors
 * (an HMAC-signed token, not a guessable offset); `limit` clamped as the document says; and, so that a client must
 * keep paging while `has_more`, an EMPTY page mid-way and a short page (the `quirkyPages` knob, on by default).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { RouterError } from './buckets';

/**
 * One catalog entry as served (Model router API, Resources and their fields, and public sources: `id`, `provider`,
 * `model`, `billing.charges_on_policy_rejection`).
 */
export interface CatalogEntry {
  id: string;
  provider: string;
  model: string;
  billing: { charges_on_policy_rejection: string };
  /** Known variants (third path segment); emulator-only field, kept for the detail. */
  variants?: string[];
  [extra: string]: unknown;
}

/** The provider of the fake models that really do something (models.ts). */
export const EMULATOR_PROVIDER = 'emulator';

/** The fake models: `emulator/echo`, `emulator/solid-png`, `emulator/slow` (variant `no-retry`), `emulator/strict`. */
const FAKE_MODELS = ['echo', 'solid-png', 'slow', 'strict'] as const;

/** Segment pattern and lengths (Model router API, Resources and their fields, value types). */
export const SEGMENT_PATTERN = /^[a-z0-9]+([._-][a-z0-9]+)*$/;
export const PROVIDER_MAX = 64;
export const MODEL_MAX = 128;
/** Cursor pattern and lengths. */
export const CURSOR_PATTERN = /^[A-Za-z0-9._~+/=-]+$/;
const CURSOR_MAX = 512;

/** Page size rules: default 20, at most 100. */
export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

/** The page index (0-based) served empty, and the one served at half its size, when pages are quirky. */
export const EMPTY_PAGE_INDEX = 2;
export const SHORT_PAGE_INDEX = 4;

const BILLING = ['yes', 'no', 'unknown'];

/**
 * The catalog: the fake models first-class among ~246 filler models of six providers, in a deterministic
 * shuffled order (the order served is not sorted). Filler models answer like `echo`. One entry carries an
 * odd billing value (`sometimes`: a client reads it as unknown) and some carry extra fields (read tolerantly).
 */
function buildCatalog(): CatalogEntry[] {
  const entries: CatalogEntry[] = FAKE_MODELS.map((model) => ({
    id: `${EMULATOR_PROVIDER}/${model}`,
    provider: EMULATOR_PROVIDER,
    model,
    billing: { charges_on_policy_rejection: model === 'echo' ? 'no' : 'unknown' },
    ...(model === 'slow' ? { variants: ['no-retry'] } : {}),
  }));
  const providers = ['acme-labs', 'pixel.works', 'sonic_forge', 'vidstream', 'lumen', 'text2x'];
  let n = 0;
  for (const provider of providers) {
    for (let i = 0; i < 41; i++, n++) {
      const model = `${provider.replace(/[._]/g, '-')}-model-${String(i + 1).padStart(3, '0')}${i % 7 === 3 ? '.v2' : ''}`;
      entries.push({
        id: `${provider}/${model}`,
        provider,
        model,
        billing: { charges_on_policy_rejection: n === 17 ? 'sometimes' : BILLING[n % 3] },
        ...(n % 11 === 5 ? { modality: 'image', tags: ['preview'] } : {}),
      });
    }
  }
  // Fisher–Yates with a fixed LCG: the same unsorted order at every start.
  let seed = 0x2545f491;
  for (let i = entries.length - 1; i > 0; i--) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    const j = seed % (i + 1);
    [entries[i], entries[j]] = [entries[j], entries[i]];
  }
  return entries;
}

/**
 * The served page size for the raw `limit` query value: absent → 20; above 100 → 100; 0 or negative → 20.
 * @throws RouterError `invalid_input` when it is not an integer.
 */
export function servedLimit(raw: string | null): number {
  if (raw === null) return DEFAULT_LIMIT;
  if (!/^[+-]?\d+$/.test(raw.trim()))
    throw new RouterError('invalid_input', `limit must be an integer; got ${JSON.stringify(raw)}`);
  const n = Number(raw.trim());
  if (n <= 0) return DEFAULT_LIMIT;
  return Math.min(n, MAX_LIMIT);
}

/** Where a cursor points: the next entry's offset and the index of the page it starts. */
interface CursorState {
  offset: number;
  page: number;
}

/**
 * A list page as served (Model router API, Resources and their fields: other fields not shown; public sources:
 * `{data, has_more, next_cursor?, limit}`).
 */
interface CatalogPage {
  data: CatalogEntry[];
  has_more: boolean;
  next_cursor?: string;
  limit: number;
}

/** Signs and reads cursors with a per-start secret: a cursor of another start (a catalog "rebuild") is expired. */
export class Catalog {
  readonly entries: CatalogEntry[];
  private readonly secret = randomBytes(32);
  private readonly byId: Map<string, CatalogEntry>;

  /** @param quirkyPages serve page {@link EMPTY_PAGE_INDEX} empty and page {@link SHORT_PAGE_INDEX} at half size (when more follows). */
  constructor(private readonly quirkyPages: boolean) {
    this.entries = buildCatalog();
    this.byId = new Map(this.entries.map((e) => [e.id, e]));
  }

  /** The entry of `provider/model`, or undefined. */
  get(provider: string, model: string): CatalogEntry | undefined {
    return this.byId.get(`${provider}/${model}`);
  }

  /**
   * One page: from the cursor's position (none: the start), at most `limit` entries.
   * @throws RouterError `invalid_input` (400) for a malformed, tampered or expired cursor.
   */
  page(cursor: string | null, limit: number): CatalogPage {
    const at = cursor === null ? { offset: 0, page: 0 } : this.read(cursor);
    const total = this.entries.length;
    let size = limit;
    if (this.quirkyPages && at.offset < total) {
      if (at.page === EMPTY_PAGE_INDEX) size = 0;
      else if (at.page === SHORT_PAGE_INDEX) size = Math.max(1, Math.floor(limit / 2));
    }
    const data = this.entries.slice(at.offset, at.offset + size);
    const next = at.offset + data.length;
    const hasMore = next < total;
    return {
      data,
      has_more: hasMore,
      ...(hasMore ? { next_cursor: this.write({ offset: next, page: at.page + 1 }) } : {}),
      limit,
    };
  }

  private mac(payload: string): string {
    return createHmac('sha256', this.secret).update(payload).digest('base64url').slice(0, 27);
  }

  private write(state: CursorState): string {
    const payload = Buffer.from(
      JSON.stringify({ o: state.offset, p: state.page, n: randomBytes(6).toString('base64url') }),
    ).toString('base64url');
    return `${payload}.${this.mac(payload)}`;
  }

  private read(cursor: string): CursorState {
    const refuse = (why: string): never => {
      throw new RouterError(
        'invalid_input',
        `the cursor is ${why}: pass a next_cursor exactly as served, or omit it for the first page`,
      );
    };
    if (cursor.length < 1 || cursor.length > CURSOR_MAX || !CURSOR_PATTERN.test(cursor)) refuse('malformed');
    const dot = cursor.indexOf('.');
    if (dot < 0) refuse('malformed');
    const payload = cursor.slice(0, dot);
    const mac = Buffer.from(cursor.slice(dot + 1));
    const expected = Buffer.from(this.mac(payload));
    // Signed with another start's secret, or altered: expired or tampered, indistinguishable.
    if (mac.length !== expected.length || !timingSafeEqual(mac, expected))
      refuse('not valid (tampered, or expired by a catalog rebuild)');
    let state: unknown;
    try {
      state = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return refuse('malformed');
    }
    const { o, p } = state as { o?: unknown; p?: unknown };
    if (!Number.isInteger(o) || !Number.isInteger(p) || (o as number) < 0 || (p as number) < 0)
      return refuse('malformed');
    return { offset: o as number, page: p as number };
  }
}

/** Levenshtein distance, for `model_not_found` suggestions. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length];
}

/**
 * Up to three catalog ids closest to `id` (Model router API, Errors: `model_not_found` carries up to three
 * suggestions).
 */
export function suggestionsFor(entries: readonly CatalogEntry[], id: string): string[] {
  return entries
    .map((e) => ({ id: e.id, d: distance(e.id, id) }))
    .sort((x, y) => x.d - y.d || (x.id < y.id ? -1 : 1))
    .slice(0, 3)
    .map((x) => x.id);
}
