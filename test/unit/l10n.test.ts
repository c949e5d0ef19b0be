// Every user-visible string goes through vscode.l10n / package.nls.json. The extension's sources and its
// manifest are read as text: a message, a title, a prompt or a tree item label written as a bare literal fails here,
// with its file and line, so a new string cannot skip the translation.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { adviceFor } from '../../src/core/views';
import { healthFromRequest, probeHealth } from '../../src/core/connection';
import { untranslated, type Translate } from '../../src/core/util';
import { apiErrorOf } from './builders';
import { startServer } from './httpServer';

const root = path.resolve(__dirname, '../../..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const nls = JSON.parse(fs.readFileSync(path.join(root, 'package.nls.json'), 'utf8')) as Record<string, string>;

/** Calls whose string arguments people read (the options of pickers, inputs and progress: {@link SHOWN_KEYS}). */
const SHOWN = [
  /\b(?:display|this\.display)\.(?:info|warning|error)\(/g,
  /\bwindow\.show(?:Information|Warning|Error)Message\(/g,
  /\bnew vscode\.TreeItem\(/g,
];
const SHOWN_KEYS =
  /\b(?:title|prompt|placeHolder|placeholder|tooltip|saveLabel|openLabel|label|detail|message)\s*:\s*(['"`])/g;

/** The text of the balanced parenthesis group that starts at `open` (a `(`), skipping over string literals. */
function group(src: string, open: number): string {
  let depth = 0;
  for (let i = open; i < src.length; i++) {
    const c = src[i];
    if (c === "'" || c === '"' || c === '`') {
      i = endOfString(src, i);
      continue;
    }
    if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return src.slice(open, i + 1);
  }
  return src.slice(open);
}

function endOfString(src: string, start: number): number {
  const quote = src[start];
  for (let i = start + 1; i < src.length; i++) {
    if (src[i] === '\\') i++;
    else if (src[i] === quote) return i;
  }
  return src.length;
}

/** `text` with every `l10n.t(…)` group removed: what is left must hold no string literal with a letter in it. */
function withoutTranslated(text: string): string {
  let out = text;
  for (;;) {
    const at = out.search(/\bl10n\.t\(/);
    if (at < 0) return out;
    const open = out.indexOf('(', at);
    out = out.slice(0, at) + out.slice(open + group(out, open).length);
  }
}

/** String literals with a word in them (`'png'` or `' · '` are not sentences; a command id is not shown). */
function wordyLiterals(text: string): string[] {
  const found: string[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c !== "'" && c !== '"' && c !== '`') continue;
    const end = endOfString(text, i);
    const literal = text.slice(i + 1, end);
    i = end;
    if (/^comfyCloud\.|^[a-z][\w.-]*$|^\$\([\w~-]+\)$/.test(literal)) continue; // ids, keys, codicons
    if (/[A-Za-z]{2,}\s+[A-Za-z]/.test(literal.replace(/\$\{[^}]*\}/g, ''))) found.push(literal);
  }
  return found;
}

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** `src` with its comments blanked (same length, so indexes and lines stay): an apostrophe in a comment is no quote. */
function withoutComments(src: string): string {
  let out = '';
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === "'" || c === '"' || c === '`') {
      const end = endOfString(src, i);
      out += src.slice(i, end + 1);
      i = end;
    } else if (c === '/' && src[i + 1] === '/') {
      const end = src.indexOf('\n', i);
      const stop = end < 0 ? src.length : end;
      out += ' '.repeat(stop - i);
      i = stop - 1;
    } else if (c === '/' && src[i + 1] === '*') {
      const end = src.indexOf('*/', i + 2);
      const stop = end < 0 ? src.length : end + 2;
      out += src.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop - 1;
    } else out += c;
  }
  return out;
}

const lineOf = (src: string, index: number): number => src.slice(0, index).split('\n').length;

describe('l10n: every string people read goes through vscode.l10n or package.nls.json', () => {
  it('no notification, prompt, quick pick, progress title or tree item label in src/extension is a bare literal', () => {
    const problems: string[] = [];
    for (const file of sources(path.join(root, 'src/extension'))) {
      const src = withoutComments(fs.readFileSync(file, 'utf8'));
      const rel = path.relative(root, file);
      for (const pattern of SHOWN) {
        for (const m of src.matchAll(pattern)) {
          const open = m.index! + m[0].length - 1;
          for (const literal of wordyLiterals(withoutTranslated(group(src, open)))) {
            problems.push(`${rel}:${lineOf(src, m.index!)}: ${JSON.stringify(literal)}`);
          }
        }
      }
      for (const m of src.matchAll(SHOWN_KEYS)) {
        const start = m.index! + m[0].length - 1;
        const literal = src.slice(start + 1, endOfString(src, start));
        // A template literal may hold `${vscode.l10n.t('…{0}…', x)}` (a codicon before translated words): those are translated.
        for (const word of wordyLiterals(withoutTranslated(src.slice(start, endOfString(src, start) + 1)))) {
          problems.push(
            `${rel}:${lineOf(src, m.index!)}: ${JSON.stringify(word)} (${literal === word ? 'option' : 'value'})`,
          );
        }
      }
    }
    assert.deepEqual(problems, [], 'wrap these in vscode.l10n.t(…):\n' + problems.join('\n'));
  });

  it('every title, name, description and welcome text in package.json is a %key% found in package.nls.json', () => {
    const problems: string[] = [];
    const shownKeys = new Set([
      'title',
      'shortTitle',
      'name',
      'description',
      'markdownDescription',
      'contents',
      'altText',
      'category',
      'displayName',
    ]);
    const visit = (value: unknown, where: string): void => {
      if (Array.isArray(value)) value.forEach((v, i) => visit(v, `${where}[${i}]`));
      else if (value && typeof value === 'object') {
        for (const [k, v] of Object.entries(value)) {
          if (typeof v === 'string' && shownKeys.has(k)) {
            const key = /^%(.+)%$/.exec(v)?.[1];
            if (!key) problems.push(`${where}.${k}: ${JSON.stringify(v)} is not a %key%`);
            else if (!(key in nls)) problems.push(`${where}.${k}: %${key}% is not in package.nls.json`);
          } else if (k === 'enumDescriptions' && Array.isArray(v)) {
            v.forEach((d, i) => /^%(.+)%$/.test(String(d)) || problems.push(`${where}.${k}[${i}] is not a %key%`));
          } else visit(v, `${where}.${k}`);
        }
      }
    };
    visit(pkg.contributes, 'contributes');
    visit({ displayName: pkg.displayName, description: pkg.description }, 'package');
    assert.deepEqual(problems, []);
  });

  it('every key of package.nls.json is used by package.json (no stale text)', () => {
    const text = fs.readFileSync(path.join(root, 'package.json'), 'utf8');
    const unused = Object.keys(nls).filter((k) => !text.includes(`"%${k}%"`));
    assert.deepEqual(unused, []);
  });

  it('every call in src/extension of a core function that words what it returns passes vscode.l10n.t (else it would show English)', () => {
    // The core functions with a `t: Translate` (or an options object with `t`) whose words the extension shows.
    const takesT =
      /\b(adviceFor|healthFromRequest|probeHealth|jobEndNotice|humanSize|logsText|errorText|groupLabel|groupAccessibilityLabel|relativeTime|statusWords|buildJobTree|jobChildren|presentEntry|presentAsset)\(/g;
    const problems: string[] = [];
    let calls = 0;
    for (const file of sources(path.join(root, 'src/extension'))) {
      const src = withoutComments(fs.readFileSync(file, 'utf8'));
      for (const m of src.matchAll(takesT)) {
        if (/\b(?:function|import)\s*$|\.\s*$/.test(src.slice(Math.max(0, m.index! - 12), m.index!))) continue; // a declaration or a method
        calls++;
        if (!/\bvscode\.l10n\.t\b/.test(group(src, m.index! + m[0].length - 1)))
          problems.push(`${path.relative(root, file)}:${lineOf(src, m.index!)}: ${m[1]}(…) without vscode.l10n.t`);
      }
    }
    assert.ok(calls >= 10, `only ${calls} calls found: the scanner is broken`);
    assert.deepEqual(problems, []);
  });

  it('the core formats {N} placeholders as vscode.l10n.t does (untranslated), leaving a missing one as written', () => {
    assert.equal(
      untranslated('Job {0} is {1}; {0} again, {2} stays', 'a1', 'done'),
      'Job a1 is done; a1 again, {2} stays',
    );
    assert.equal(untranslated('{0} items', 3), '3 items');
    assert.equal(untranslated('Workflow', 'unused'), 'Workflow', 'no placeholder: the message as it is');
    assert.equal(untranslated('{x} and {} stay', 1), '{x} and {} stay');
  });
});

/** The bundle script's exports (scripts/l10n-bundle.mjs, an ES module: loaded with a real `import()`, which tsc's CommonJS output would turn into a `require`). */
interface BundleScript {
  SOURCE_DIRS: string[];
  BUNDLE_FILE: string;
  extractMessages(fileName: string, text: string): { messages: string[]; problems: string[] };
  buildBundle(root?: string): { bundle: Record<string, string>; problems: string[] };
  bundleText(bundle: Record<string, string>): string;
}
const importModule = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<unknown>;
const bundleScript = (): Promise<BundleScript> =>
  importModule(pathToFileURL(path.join(root, 'scripts/l10n-bundle.mjs')).href) as Promise<BundleScript>;

describe('l10n: the English source bundle (l10n/bundle.l10n.json) holds every runtime message', () => {
  it('the script takes the literal message of vscode.l10n.t(…), l10n.t(…) and a core t(…), decoded, and nothing in comments, strings or regular expressions', async () => {
    const { extractMessages } = await bundleScript();
    const text = [
      "import * as vscode from 'vscode';",
      "const a = vscode.l10n.t('Comfy Cloud: job {0} was canceled.', id);",
      'const b = l10n.t("It\'s \\"done\\"\\n");',
      'const c = t(`Plain template`, 1);',
      "// vscode.l10n.t('in a comment')",
      "/* t('in a block comment') */",
      'const d = \'vscode.l10n.t("in a string")\';',
      "const e = /t\\('in a regex'\\)/;",
      "const f = split('not a translation'); const g = obj.t('not l10n');",
    ].join('\n');
    const found = extractMessages('x.ts', text);
    assert.deepEqual(found.messages, ['Comfy Cloud: job {0} was canceled.', 'It\'s "done"\n', 'Plain template']);
    assert.deepEqual(found.problems, []);
  });

  it('a translation call whose message is not a literal is reported with its file and line (it could not be in the bundle)', async () => {
    const { extractMessages } = await bundleScript();
    const found = extractMessages(
      'y.ts',
      "const ok = t('fine');\nconst bad = vscode.l10n.t(words);\nconst worse = t(`job ${id}`);",
    );
    assert.deepEqual(found.messages, ['fine']);
    assert.deepEqual(found.problems, [
      'y.ts:2: the message of vscode.l10n.t(…) is not a string literal',
      'y.ts:3: the message of t(…) is not a string literal',
    ]);
  });

  it('l10n/bundle.l10n.json is what the sources give (run node scripts/l10n-bundle.mjs after changing a message)', async () => {
    const { buildBundle, bundleText, BUNDLE_FILE, SOURCE_DIRS } = await bundleScript();
    assert.deepEqual(SOURCE_DIRS, ['src/extension', 'src/core']);
    const { bundle, problems } = buildBundle(root);
    assert.deepEqual(problems, []);
    // Messages known to be shown, from both folders: the extraction reached them.
    assert.equal(
      bundle['Comfy Cloud: the local emulator did not start: {0}'],
      'Comfy Cloud: the local emulator did not start: {0}',
    );
    assert.ok('the queue is full' in bundle && 'Comfy Cloud: job {0} was canceled.' in bundle);
    const file = path.join(root, BUNDLE_FILE);
    assert.ok(fs.existsSync(file), `${BUNDLE_FILE} is missing: run node scripts/l10n-bundle.mjs`);
    const current = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string>;
    assert.deepEqual(
      {
        missing: Object.keys(bundle).filter((k) => !(k in current)),
        stale: Object.keys(current).filter((k) => !(k in bundle)),
      },
      { missing: [], stale: [] },
      'run node scripts/l10n-bundle.mjs',
    );
    assert.equal(fs.readFileSync(file, 'utf8'), bundleText(bundle));
  });

  it('package.json points VS Code at the bundle folder and the .vsix ships it', () => {
    assert.equal(pkg.l10n, './l10n');
    assert.match(fs.readFileSync(path.join(root, '.vscodeignore'), 'utf8'), /^!l10n\/\*\*$/m);
  });
});

describe('l10n: the core words the extension shows go through the Translate it passes (English by default, for the CLI)', () => {
  /** A translation that marks what it translated: every word of ours must come out marked. */
  const marked: Translate = (message, ...args) => `«${untranslated(message, ...args)}»`;

  it('adviceFor: each part of the advice (what happened, the retry story, the closing) goes through t; without t it is English', () => {
    const e = apiErrorOf('queue_full', 600);
    e.retries = { attempts: 2, elapsedMs: 2_000, maxRetryAfterS: 120 };
    assert.equal(
      adviceFor(e, 'extension', marked),
      '«the queue is full»; ««tried 2 times over 2 s», then not again: «the Retry-After of 600 s is longer than the client waits (120 s)»»; «try again in 600 s or later»',
    );
    assert.equal(
      adviceFor(e, 'extension'),
      'the queue is full; tried 2 times over 2 s, then not again: the Retry-After of 600 s is longer than the client waits (120 s); try again in 600 s or later',
    );
    assert.equal(
      adviceFor(apiErrorOf('forbidden'), 'extension', marked),
      '«the API key is valid but not allowed to do this; use a key of the account that owns the job or asset»',
    );
    assert.equal(
      adviceFor(apiErrorOf('unauthorized'), 'cli', marked),
      '«set an API key with --api-key or COMFY_API_KEY»',
    );
  });

  it('health: the detail of the last request and of the probe goes through t; the status code stays a number', async () => {
    assert.deepEqual(
      healthFromRequest({ method: 'GET', url: 'http://x/api/v2/jobs', status: 503, durationMs: 3 }, marked),
      { state: 'error', detail: '«last request: 503»' },
    );
    assert.deepEqual(healthFromRequest({ method: 'GET', url: 'http://x/api/v2/jobs', durationMs: 3 }, marked), {
      state: 'unreachable',
      detail: '«last request: no answer («failed»)»',
    });
    assert.equal(
      healthFromRequest({ method: 'GET', url: 'http://x/api/v2/jobs', status: 200, durationMs: 3 }).detail,
      'last request: 200',
    );
    const server = await startServer((_req, res) => void res.writeHead(404).end());
    try {
      assert.deepEqual(await probeHealth({ baseUrl: server.origin, t: marked }), {
        state: 'unsupported',
        detail: '««health probe»: not served here (404)»',
      });
      assert.deepEqual(await probeHealth({ baseUrl: server.origin }), {
        state: 'unsupported',
        detail: 'health probe: not served here (404)',
      });
    } finally {
      await server.close();
    }
  });
});
