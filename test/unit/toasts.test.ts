// Notifications say whose they are: every toast of the extension starts with "Comfy Cloud:". The rule lives in one
// place (Display, through toastText), so the sources are read as text to check that every notification goes there:
// no `window.show…Message` outside display.ts but a modal dialog (VS Code titles it itself), and each sentence given
// to the display starts with the prefix already (a translator sees the whole sentence).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PRODUCT_PREFIX, toastText } from '../../src/extension/platform/toastText';

const root = path.resolve(__dirname, '../../..');
const extensionDir = path.join(root, 'src/extension');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

/** The index of the quote closing the string literal that opens at `start`. */
function endOfString(src: string, start: number): number {
  for (let i = start + 1; i < src.length; i++) {
    if (src[i] === '\\') i++;
    else if (src[i] === src[start]) return i;
  }
  return src.length;
}

/** The balanced parenthesis group opening at `open`, string literals skipped. */
function group(src: string, open: number): string {
  let depth = 0;
  for (let i = open; i < src.length; i++) {
    const c = src[i];
    if (c === "'" || c === '"' || c === '`') i = endOfString(src, i);
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return src.slice(open, i + 1);
  }
  return src.slice(open);
}

/** The first argument of a call's argument text `(a, b)`: up to the first comma outside brackets and strings. */
function firstArgument(args: string): string {
  let depth = 0;
  for (let i = 1; i < args.length; i++) {
    const c = args[i];
    if (c === "'" || c === '"' || c === '`') i = endOfString(args, i);
    else if (c === '(' || c === '[' || c === '{') depth++;
    else if ((c === ')' || c === ']' || c === '}') && depth > 0) depth--;
    else if ((c === ',' || c === ')') && depth === 0) return args.slice(1, i);
  }
  return args.slice(1);
}

/** The sentences of the `l10n.t` calls at the top of `text` (not those inside another one's arguments). */
function sentences(text: string): string[] {
  const found: string[] = [];
  let from = 0;
  for (;;) {
    const at = text.slice(from).search(/\bl10n\.t\(/);
    if (at < 0) return found;
    const open = text.indexOf('(', from + at);
    const call = group(text, open);
    const literal = /^\(\s*(['"`])((?:\\.|(?!\1).)*)\1/.exec(call);
    if (literal) found.push(literal[2]!);
    from = open + call.length;
  }
}

/** Each call of `pattern` in the extension's sources: its file, line and argument text. */
function calls(pattern: RegExp, skip: (file: string) => boolean = () => false): { where: string; args: string }[] {
  const found: { where: string; args: string }[] = [];
  for (const file of sources(extensionDir)) {
    if (skip(file)) continue;
    const src = fs.readFileSync(file, 'utf8');
    for (const m of src.matchAll(pattern)) {
      const open = m.index + m[0].length - 1;
      found.push({
        where: `${path.relative(root, file)}:${src.slice(0, m.index).split('\n').length}`,
        args: group(src, open),
      });
    }
  }
  return found;
}

describe('notifications: every toast says "Comfy Cloud:"', () => {
  it('toastText prefixes a message without the product name once, and leaves one that has it as it is', () => {
    const t = (message: string, ...args: string[]): string =>
      message.replace(/\{(\d+)\}/g, (_m, i: string) => args[Number(i)] ?? '');
    assert.equal(toastText('no model router is connected.', t), 'Comfy Cloud: no model router is connected.');
    assert.equal(toastText('Comfy Cloud: job abc was canceled.', t), 'Comfy Cloud: job abc was canceled.');
    assert.ok(toastText('', t).startsWith(PRODUCT_PREFIX));
  });

  it('no notification bypasses the Display (window.show…Message only in display.ts, or as a modal dialog)', () => {
    const direct = calls(
      /\bwindow\.show(?:Information|Warning|Error)Message\(/g,
      (f) => path.basename(f) === 'display.ts',
    );
    assert.ok(direct.length > 0, 'the scan found no call at all: the pattern is wrong');
    const toasts = direct.filter((c) => !/\bmodal:\s*true\b/.test(c.args));
    assert.deepEqual(
      toasts.map((c) => c.where),
      [],
    );
  });

  it('every sentence given to a notification (display.info/warning/error, lasting) starts with "Comfy Cloud:"', () => {
    const shown = calls(/\bdisplay\.(?:info|warning|error|lasting)\(/g);
    assert.ok(shown.length > 20, `only ${shown.length} calls found: the pattern is wrong`);
    const bad: string[] = [];
    for (const c of shown) {
      // Every sentence of the message (a conditional may give several) must start with the prefix.
      for (const sentence of sentences(firstArgument(c.args))) {
        if (!sentence.startsWith(PRODUCT_PREFIX)) bad.push(`${c.where}: ${sentence}`);
      }
    }
    assert.deepEqual(bad, []);
  });
});
