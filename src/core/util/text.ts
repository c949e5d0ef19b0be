/**
 * The one place that makes server-chosen text safe to show (everything a server sends is untrusted: a server string
 * printed to a terminal has its control characters neutralized, and the user's own secrets are redacted from any
 * text before it is printed or logged). The CLI and the extension share it.
 *
 * What is neutralized, and why:
 * - C0 controls U+0000–U+001F (ESC starts terminal escape sequences: clear screen, set title, move the cursor, …;
 *   CR and BS overwrite what was printed; LF forges a new log line), DEL U+007F, and C1 controls U+0080–U+009F
 *   (U+009B is the 8-bit CSI, U+009D the 8-bit OSC, which some terminals obey like `ESC [` and `ESC ]`).
 * - Unicode bidi embeddings, overrides and isolates U+202A–U+202E and U+2066–U+2069, and the invisible bidi marks
 *   U+200E, U+200F, U+061C: they reorder what is displayed, so shown text differs from the real text ("Trojan
 *   Source", CVE-2021-42574).
 * - Line and paragraph separators U+2028, U+2029: some terminals and viewers break the line there (a forged line).
 * - Invisible characters that hide or smuggle text: zero width space U+200B, word joiner and invisible operators
 *   U+2060–U+2064, deprecated format controls U+206A–U+206F, ZWNBSP/BOM U+FEFF, Mongolian vowel separator U+180E,
 *   interlinear annotation controls U+FFF9–U+FFFB, and the tag characters U+E0000–U+E007F (an invisible copy of
 *   ASCII, "ASCII smuggling").
 * - Lone surrogates (U+D800–U+DFFF not in a pair): not text; shown as their escape instead of a U+FFFD.
 * Kept on purpose: ZWNJ and ZWJ (U+200C, U+200D), which emoji sequences and several scripts need and which neither
 * reorder nor hide text; variation selectors; the soft hyphen. A backslash is not doubled: the escapes are for a
 * person to read (and our own messages hold Windows paths), not to be decoded back.
 */

/** Options of {@link neutralize}. */
export interface NeutralizeOptions {
  /**
   * Keep LF (`\n`) raw: for multi-line text that we compose ourselves (a catch-all writer). Every other control,
   * CR included, is still escaped. Default false: a server string never breaks a line.
   */
  keepNewlines?: boolean;
}

// One regex for every character listed above; the `u` flag makes `[\ud800-\udfff]` match only lone surrogates.
const UNSAFE =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u061c\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\u{e0000}-\u{e007f}\ud800-\udfff]/gu;
const UNSAFE_KEEP_LF =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\u{e0000}-\u{e007f}\ud800-\udfff]/gu;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** The visible escape of one unsafe character: `\n` `\r` `\t`, `\xHH` for other C0 and DEL, `\uHHHH` above, `\u{HHHHH}` astral. */
function escapeChar(ch: string): string {
  const named = NAMED[ch];
  if (named) return named;
  const cp = ch.codePointAt(0) ?? 0;
  if (cp <= 0x7f) return `\\x${cp.toString(16).padStart(2, '0')}`;
  if (cp > 0xffff) return `\\u{${cp.toString(16)}}`;
  return `\\u${cp.toString(16).padStart(4, '0')}`;
}

/**
 * `text` with every control character, escape-sequence introducer, bidi control and invisible format character
 * (the list in this module's header) replaced by a visible escape: ESC → `\x1b`, LF → `\n`, CR → `\r`, TAB → `\t`,
 * DEL → `\x7f`, U+009B → `\u009b`, U+202E → `\u202e`, U+E0041 → `\u{e0041}`. Everything else is kept as is.
 * Never throws (lone surrogates included). Rule: server text is untrusted; it is neutralized before it is shown.
 */
export function neutralize(text: string, options: NeutralizeOptions = {}): string {
  const s = String(text);
  // Most text is printable ASCII, which holds nothing to escape: one pass over its code units instead of the regex
  // (the Jobs view cleans every string of thousands of items).
  if (isPrintableAscii(s)) return s;
  return s.replace(options.keepNewlines ? UNSAFE_KEEP_LF : UNSAFE, escapeChar);
}

/** True when every code unit of `s` is printable ASCII (U+0020–U+007E): none of them is unsafe. */
function isPrintableAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

/** What replaces a secret in shown or logged text. */
export const REDACTED = '«redacted»';

/** Secrets shorter than this (in characters) are not redacted: replacing a few common letters would mangle text. */
export const MIN_SECRET_LENGTH = 8;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The forms in which a server may echo a secret, as regex sources: as is, percent-encoded (`encodeURIComponent`,
 * hex digits in either case), form-encoded (`URLSearchParams`, space as `+`), and JSON-string-escaped.
 */
function secretPatterns(secret: string): string[] {
  const forms = new Set<string>([
    secret,
    encodeURIComponent(secret),
    new URLSearchParams({ s: secret }).toString().slice(2),
    JSON.stringify(secret).slice(1, -1),
  ]);
  return [...forms].map((form) =>
    escapeRegExp(form).replace(
      /%([0-9A-F])([0-9A-F])/g,
      (_m, a: string, b: string) => `%[${a}${a.toLowerCase()}][${b}${b.toLowerCase()}]`,
    ),
  );
}

/** One regex that matches every form of every usable secret, longest first (so a secret that contains another is
 * replaced whole); undefined when no secret is long enough. */
function secretsRegExp(secrets: Iterable<string | undefined | null>): RegExp | undefined {
  const sources: string[] = [];
  for (const s of secrets)
    if (typeof s === 'string' && s.length >= MIN_SECRET_LENGTH) sources.push(...secretPatterns(s));
  if (sources.length === 0) return undefined;
  // Longest pattern source first: a longer secret's forms win over a shorter one they contain.
  sources.sort((a, b) => b.length - a.length);
  return new RegExp([...new Set(sources)].join('|'), 'g');
}

/**
 * `text` with every occurrence of each secret replaced by {@link REDACTED}: the raw secret and its percent-encoded
 * (`encodeURIComponent`, either hex case), form-encoded and JSON-escaped forms, so an echo inside an error message,
 * a URL query or a JSON body is caught. Secrets that are empty, missing or shorter than {@link MIN_SECRET_LENGTH}
 * characters are ignored. Does not neutralize (see {@link Redactor.clean}). Rule: no secret in a log or a message.
 */
export function redact(text: string, secrets: Iterable<string | undefined | null>): string {
  const re = secretsRegExp(secrets);
  return re ? String(text).replace(re, REDACTED) : String(text);
}

/**
 * Holds the secrets of a session (the user's API key, a partner key) so that every printed or logged line can be
 * redacted and neutralized the same way. Shared by the CLI and the extension; the extension adds a key when it is
 * read, set or changed. A secret once added stays: redacting a replaced key too is harmless.
 */
export class Redactor {
  private readonly secrets = new Set<string>();
  private re: RegExp | undefined;

  constructor(secrets: Iterable<string | undefined | null> = []) {
    for (const s of secrets) this.add(s);
  }

  /** Adds a secret; undefined, empty and short (< {@link MIN_SECRET_LENGTH} chars) values are ignored. */
  add(secret: string | undefined | null): void {
    if (typeof secret !== 'string' || secret.length < MIN_SECRET_LENGTH || this.secrets.has(secret)) return;
    this.secrets.add(secret);
    this.re = secretsRegExp(this.secrets);
  }

  /** How many secrets are held (for tests and diagnostics; never the secrets themselves). */
  get size(): number {
    return this.secrets.size;
  }

  /** `text` with the secrets replaced by {@link REDACTED} (see {@link redact}); not neutralized. */
  redact(text: string): string {
    return this.re ? String(text).replace(this.re, REDACTED) : String(text);
  }

  /** `text` redacted, then neutralized: what to print or log. */
  clean(text: string, options: NeutralizeOptions = {}): string {
    return neutralize(this.redact(text), options);
  }

  /** `value` as terminal-safe JSON with the secrets redacted (see {@link jsonForTerminal}). */
  json(value: unknown): string {
    return jsonForTerminal(value, this);
  }
}

// What JSON.stringify leaves raw but a terminal must not see: DEL, C1, and the bidi / invisible characters of
// `neutralize` (C0 and lone surrogates JSON.stringify already escapes). Matched per UTF-16 unit, so a tag
// character (astral) is escaped as its two surrogates, which keeps the JSON valid.
const JSON_UNSAFE =
  /[\u007f-\u009f\u061c\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]|\udb40[\udc00-\udc7f]/g;

function jsonEscapeUnits(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) out += `\\u${s.charCodeAt(i).toString(16).padStart(4, '0')}`;
  return out;
}

/**
 * `JSON.stringify(value, null, 2)`, safe for a terminal and still valid JSON that parses back to the same value
 * (secrets aside): DEL, C1 controls, bidi controls and the invisible characters of {@link neutralize} (which
 * JSON.stringify leaves raw) become `\u00XX` / `\uXXXX` escapes. With a `redactor`, every string value and key has its
 * secrets replaced by {@link REDACTED} before serialization (so the JSON stays well-formed). A value JSON cannot
 * represent (undefined, a function) gives `null`. Throws what JSON.stringify throws (a cycle, a BigInt). `indent`: spaces
 * per level (0: one line, for JSON Lines).
 * Rule: server JSON printed to a terminal is neutralized and redacted.
 */
export function jsonForTerminal(value: unknown, redactor?: Redactor, indent = 2): string {
  const replacer = redactor
    ? function (this: unknown, _key: string, v: unknown): unknown {
        if (typeof v === 'string') return redactor.redact(v);
        if (v && typeof v === 'object' && !Array.isArray(v)) {
          // Keys too: rebuild the object with redacted keys (its values pass through this replacer next).
          return Object.fromEntries(
            Object.entries(v as Record<string, unknown>).map(([k, inner]) => [redactor.redact(k), inner]),
          );
        }
        return v;
      }
    : undefined;
  const text = JSON.stringify(value, replacer, indent || undefined) as string | undefined;
  return (text ?? 'null').replace(JSON_UNSAFE, jsonEscapeUnits);
}

/** By ASCII code: 1 for a character escaped with a backslash, 2 for `<`, `>`, `&` (an HTML entity), else 0. */
const MARKDOWN_SPECIAL = new Uint8Array(128);
for (const ch of '\\`*_{}[]()#+-.!|~$:') MARKDOWN_SPECIAL[ch.charCodeAt(0)] = 1;
for (const ch of '<>&') MARKDOWN_SPECIAL[ch.charCodeAt(0)] = 2;

/** Escapes Markdown's special characters (and `<`, `>`, `&` for its HTML), so text shows literally. */
export function escapeMarkdown(text: string): string {
  // A scan of the code units, copying the runs between special characters: several times faster than a regex with a
  // callback per match (an ISO time or a path has several: `-`, `.`, `:`; the Jobs view escapes thousands).
  let out = '';
  let last = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const kind = c < 128 ? MARKDOWN_SPECIAL[c]! : 0;
    if (kind === 0) continue;
    out += text.slice(last, i) + (kind === 1 ? `\\${text[i]}` : c === 60 ? '&lt;' : c === 62 ? '&gt;' : '&amp;');
    last = i + 1;
  }
  return last === 0 ? text : out + text.slice(last);
}
