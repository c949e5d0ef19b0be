/** Server text made safe to show: control characters neutralized, secrets redacted (the rules of src/core/util/text.ts). */
import * as assert from 'node:assert/strict';
import {
  MIN_SECRET_LENGTH,
  REDACTED,
  Redactor,
  escapeMarkdown,
  jsonForTerminal,
  neutralize,
  redact,
} from '../../src/core/util';

/** True when `s` holds no C0, DEL or C1 control and no bidi override or isolate. */
function hasNoRawControl(s: string): boolean {
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp <= 0x1f || (cp >= 0x7f && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
      return false;
  }
  return true;
}

describe('neutralize: every control character and escape sequence is shown escaped, never emitted raw', () => {
  it('every C0 control (U+0000–U+001F) becomes a visible escape: \\n \\r \\t by name, the others \\xHH', () => {
    for (let cp = 0; cp <= 0x1f; cp++) {
      const out = neutralize(`a${String.fromCharCode(cp)}b`);
      assert.ok(hasNoRawControl(out), `U+${cp.toString(16)} left raw`);
      const expected =
        cp === 0x0a ? '\\n' : cp === 0x0d ? '\\r' : cp === 0x09 ? '\\t' : `\\x${cp.toString(16).padStart(2, '0')}`;
      assert.equal(out, `a${expected}b`);
    }
    assert.equal(neutralize('\x07\x08\x00'), '\\x07\\x08\\x00', 'BEL, BS, NUL');
  });

  it('DEL (U+007F) becomes \\x7f and every C1 control (U+0080–U+009F) becomes \\u00XX', () => {
    assert.equal(neutralize('x\x7fy'), 'x\\x7fy');
    for (let cp = 0x80; cp <= 0x9f; cp++) {
      assert.equal(neutralize(String.fromCharCode(cp)), `\\u00${cp.toString(16)}`);
    }
  });

  it('terminal escape sequences are defused: clear screen ESC[2J, set title OSC ESC]0;title BEL, the 8-bit CSI U+009B', () => {
    assert.equal(neutralize('\x1b[2Jdone'), '\\x1b[2Jdone');
    assert.equal(neutralize('\x1b]0;pwned\x07ok'), '\\x1b]0;pwned\\x07ok');
    assert.equal(neutralize('\u009b31mred'), '\\u009b31mred');
    assert.equal(neutralize('100%\rOK  '), '100%\\rOK  ', 'a CR cannot overwrite what was printed');
  });

  it('a server string cannot forge a new line: LF and the Unicode line and paragraph separators are escaped', () => {
    assert.equal(neutralize('failed\n[auth] key accepted'), 'failed\\n[auth] key accepted');
    assert.equal(neutralize('a\u2028b\u2029c'), 'a\\u2028b\\u2029c');
  });

  it('bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) and bidi marks are escaped', () => {
    for (const cp of [0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c]) {
      assert.equal(neutralize(`a${String.fromCharCode(cp)}b`), `a\\u${cp.toString(16).padStart(4, '0')}b`);
    }
    assert.equal(neutralize('invoice\u202Efdp.exe'), 'invoice\\u202efdp.exe');
  });

  it('invisible characters that hide or smuggle text are escaped: ZWSP, word joiner, BOM, tag characters', () => {
    assert.equal(neutralize('a\u200bb\u2060c\ufeffd'), 'a\\u200bb\\u2060c\\ufeffd');
    assert.equal(neutralize('x\u{e0041}\u{e007f}y'), 'x\\u{e0041}\\u{e007f}y');
  });

  it('ordinary text is kept as is: accents, CJK, emoji (ZWJ sequences included), backslashes, printable ASCII', () => {
    const text = 'café 東京 👨‍👩‍👧 C:\\Users\\me ~!@#$%^&*()_+{}|:"<>?';
    assert.equal(neutralize(text), text);
  });

  it('lone surrogates do not crash and are shown escaped; a valid pair is kept', () => {
    assert.equal(neutralize('a\ud800b\udc00c'), 'a\\ud800b\\udc00c');
    assert.equal(neutralize('\ud83d\ude00'), '😀');
    assert.equal(neutralize('\ude00\ud83d'), '\\ude00\\ud83d', 'a reversed pair is two lone surrogates');
  });

  it('keepNewlines (text we compose ourselves) keeps LF raw but still escapes CR, ESC, C1 and bidi', () => {
    assert.equal(
      neutralize('line 1\nline 2\r\n\x1b[2J\u009b\u202e', { keepNewlines: true }),
      'line 1\nline 2\\r\n\\x1b[2J\\u009b\\u202e',
    );
  });
});

describe("redact: the user's secrets are replaced before anything is printed or logged", () => {
  const key = 'sk-live-0123456789abcdef';
  it('every occurrence of a secret is replaced by the marker, even echoed in an error message', () => {
    assert.equal(redact(`invalid key ${key}; you sent ${key}`, [key]), `invalid key ${REDACTED}; you sent ${REDACTED}`);
  });

  it('a secret inside a URL query, raw or percent-encoded (encodeURIComponent, either hex case), is replaced', () => {
    const secret = 'a/b+c=d&e f#g';
    const url = `https://x.example/p?token=${encodeURIComponent(secret)}&lower=${encodeURIComponent(secret).toLowerCase()}&raw=${secret}`;
    const out = redact(url, [secret]);
    assert.equal(out, `https://x.example/p?token=${REDACTED}&lower=${REDACTED}&raw=${REDACTED}`);
    assert.equal(
      redact(`?${new URLSearchParams({ k: secret }).toString()}`, [secret]),
      `?k=${REDACTED}`,
      'form-encoded (URLSearchParams)',
    );
  });

  it('a secret inside JSON, including its JSON-escaped form, is replaced', () => {
    const secret = 'quote"back\\slash';
    assert.equal(
      redact(JSON.stringify({ error: { message: `bad key ${secret}` } }), [secret]),
      `{"error":{"message":"bad key ${REDACTED}"}}`,
    );
  });

  it('empty, missing and short secrets (< 8 characters) are ignored, so text is not mangled', () => {
    assert.equal(MIN_SECRET_LENGTH, 8);
    assert.equal(redact('the abc job is done', ['', 'abc', 'job', undefined, null, '1234567']), 'the abc job is done');
    assert.equal(redact('x 12345678 y', ['12345678']), `x ${REDACTED} y`);
  });

  it('secrets that are regex metacharacters are matched literally', () => {
    assert.equal(redact('a.*.*.*.*b aXXXXXXXXb', ['.*.*.*.*']), `a${REDACTED}b aXXXXXXXXb`);
  });

  it('when one secret contains another, the longer one is replaced whole', () => {
    assert.equal(
      redact('key=partner-12345678-extra', ['partner-12345678', 'partner-12345678-extra']),
      `key=${REDACTED}`,
    );
  });
});

describe('Redactor: the secrets of a session, shared by the CLI and the extension', () => {
  it('add() learns a secret later (a key set or changed), and older secrets stay redacted', () => {
    const r = new Redactor();
    assert.equal(r.redact('old-key-123456 new-key-654321'), 'old-key-123456 new-key-654321');
    r.add('old-key-123456');
    r.add('new-key-654321');
    r.add(undefined);
    r.add('short');
    assert.equal(r.size, 2);
    assert.equal(r.redact('old-key-123456 new-key-654321'), `${REDACTED} ${REDACTED}`);
  });

  it('clean() redacts, then neutralizes: a key wrapped in escape sequences is redacted and the sequences shown escaped', () => {
    const r = new Redactor(['sk-0123456789']);
    assert.equal(r.clean('\x1b[31msk-0123456789\x1b[0m\n'), `\\x1b[31m${REDACTED}\\x1b[0m\\n`);
    assert.equal(r.clean('a\nb sk-0123456789', { keepNewlines: true }), `a\nb ${REDACTED}`);
  });
});

describe('jsonForTerminal: valid JSON, safe in a terminal', () => {
  it('DEL, C1 and bidi controls (left raw by JSON.stringify) are escaped as \\u00XX, and the JSON parses back the same', () => {
    const value = { message: 'a\x7fb\u009b2Jc\u202ed\u2066e\u2028f', 'k\u009bey': ['\x1b[2J', '\u{e0041}'] };
    assert.match(JSON.stringify(value), /\u009b/, 'JSON.stringify alone leaves C1 raw (the reason for this function)');
    const text = jsonForTerminal(value);
    assert.ok(hasNoRawControl(text.replace(/\n/g, '')), text);
    assert.match(text, /a\\u007fb\\u009b2Jc\\u202ed\\u2066e\\u2028f/);
    assert.match(text, /\\udb40\\udc41/, 'a tag character is escaped as its surrogate pair');
    assert.deepEqual(JSON.parse(text), value);
    assert.ok(text.startsWith('{\n  "message": '), 'indented by 2, as JSON.stringify(value, null, 2)');
  });

  it('with a Redactor, secrets in values and keys are redacted and the output stays valid JSON', () => {
    const r = new Redactor(['sk-0123456789']);
    const text = jsonForTerminal(
      { url: 'https://x/?k=sk-0123456789', 'sk-0123456789': 1, nested: ['sk-0123456789'] },
      r,
    );
    assert.doesNotMatch(text, /sk-0123456789/);
    assert.deepEqual(JSON.parse(text), { url: `https://x/?k=${REDACTED}`, [REDACTED]: 1, nested: [REDACTED] });
    assert.equal(r.json({ a: 'sk-0123456789' }), `{\n  "a": "${REDACTED}"\n}`);
  });

  it('a value JSON cannot represent gives null, never the text "undefined"', () => {
    assert.equal(jsonForTerminal(undefined), 'null');
  });
});

describe('escapeMarkdown and neutralize: character by character, whatever surrounds it', () => {
  /** Every ASCII character, some that are not (two-byte, astral, lone surrogates), in runs of several lengths. */
  const samples = ((): string[] => {
    const chars = [
      ...Array.from({ length: 128 }, (_, c) => String.fromCharCode(c)),
      'é',
      '—',
      '😀',
      '\u202e',
      '\ud800',
    ];
    const out = chars.map((c) => `a${c}b`);
    for (let i = 0; i < 200; i++)
      out.push(Array.from({ length: i % 17 }, (_, j) => chars[(i * 31 + j * 7) % chars.length]).join(''));
    return out;
  })();

  it('escapeMarkdown backslash-escapes each of \\`*_{}[]()#+-.!|~$: and writes <, >, & as entities, nothing else', () => {
    const one = (ch: string): string =>
      ch === '<'
        ? '&lt;'
        : ch === '>'
          ? '&gt;'
          : ch === '&'
            ? '&amp;'
            : '\\`*_{}[]()#+-.!|~$:'.includes(ch)
              ? `\\${ch}`
              : ch;
    for (const text of samples)
      assert.equal(escapeMarkdown(text), text.split('').map(one).join(''), JSON.stringify(text));
    assert.equal(escapeMarkdown('2026-11-27T10:00:00.000Z'), '2026\\-11\\-27T10\\:00\\:00\\.000Z');
    assert.equal(escapeMarkdown(''), '');
  });

  it('neutralize keeps printable ASCII as it is and escapes the rest as one character at a time would', () => {
    for (const text of samples) {
      const expected = [...text]
        .map((ch) => (ch.length === 1 && ch >= ' ' && ch <= '~' ? ch : neutralize(ch)))
        .join('');
      assert.equal(neutralize(text), expected, JSON.stringify(text));
    }
    const ascii = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join('');
    assert.equal(neutralize(ascii), ascii);
  });
});
