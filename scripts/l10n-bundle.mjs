// The English source bundle of the extension's runtime strings (every user-visible string goes through
// vscode.l10n): every message given to `vscode.l10n.t('…')` in src/extension, and to a `t('…')` (a core
// `Translate`, which the extension sets to vscode.l10n.t) in src/extension and src/core, as key and value, sorted, in
// l10n/bundle.l10n.json (package.json "l10n": "./l10n"). Translators copy it to bundle.l10n.<locale>.json.
//
//   node scripts/l10n-bundle.mjs           writes l10n/bundle.l10n.json
//   node scripts/l10n-bundle.mjs --check   exits 1 (naming the differences) when the file is not what the sources give
//
// The sources are parsed with the TypeScript compiler (a devDependency), so comments, strings and regular expressions
// that merely look like a call are not taken. A message that is not a literal (`t(words)`) cannot be extracted: it is
// an error, so every shown message stays in the bundle.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The folders whose sources are read, relative to the repository root. */
export const SOURCE_DIRS = ['src/extension', 'src/core'];
/** Where the bundle is written, relative to the repository root. */
export const BUNDLE_FILE = 'l10n/bundle.l10n.json';

/** Whether `callee` is `t` or `l10n.t` / `….l10n.t` (the translation calls). */
function isTranslateCall(callee) {
  if (ts.isIdentifier(callee)) return callee.text === 't';
  if (!ts.isPropertyAccessExpression(callee) || callee.name.text !== 't') return false;
  const owner = callee.expression;
  return (
    (ts.isIdentifier(owner) && owner.text === 'l10n') ||
    (ts.isPropertyAccessExpression(owner) && owner.name.text === 'l10n')
  );
}

/**
 * The messages of one source file: `{ messages: string[], problems: string[] }`, messages in source order (decoded
 * literal values), problems as `file:line: …` for a translation call whose message is not a string literal.
 */
export function extractMessages(fileName, text) {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const messages = [];
  const problems = [];
  const visit = (node) => {
    if (ts.isCallExpression(node) && isTranslateCall(node.expression)) {
      const first = node.arguments[0];
      if (first && (ts.isStringLiteral(first) || ts.isNoSubstitutionTemplateLiteral(first))) messages.push(first.text);
      else {
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        problems.push(
          `${fileName}:${line}: the message of ${node.expression.getText(source)}(…) is not a string literal`,
        );
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { messages, problems };
}

function tsFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? tsFiles(p) : e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** The bundle the sources under `root` give: `{ bundle: Record<message, message> (sorted), problems: string[] }`. */
export function buildBundle(root = ROOT) {
  const all = new Set();
  const problems = [];
  for (const dir of SOURCE_DIRS) {
    for (const file of tsFiles(path.join(root, dir)).sort()) {
      const found = extractMessages(path.relative(root, file).split(path.sep).join('/'), fs.readFileSync(file, 'utf8'));
      found.messages.forEach((m) => all.add(m));
      problems.push(...found.problems);
    }
  }
  const bundle = {};
  for (const message of [...all].sort()) bundle[message] = message;
  return { bundle, problems };
}

/** The bundle as written to {@link BUNDLE_FILE}: two-space JSON, non-ASCII kept, a final newline. */
export function bundleText(bundle) {
  return `${JSON.stringify(bundle, null, 2)}\n`;
}

function main(argv) {
  const { bundle, problems } = buildBundle(ROOT);
  if (problems.length > 0) {
    console.error(`l10n-bundle: messages that cannot be extracted (use a string literal):\n${problems.join('\n')}`);
    return 1;
  }
  const file = path.join(ROOT, BUNDLE_FILE);
  const text = bundleText(bundle);
  if (argv.includes('--check')) {
    const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    if (current === text) return 0;
    const old = current ? Object.keys(JSON.parse(current)) : [];
    const added = Object.keys(bundle).filter((k) => !old.includes(k));
    const removed = old.filter((k) => !(k in bundle));
    console.error(`l10n-bundle: ${BUNDLE_FILE} is out of date (run node scripts/l10n-bundle.mjs)`);
    for (const k of added) console.error(`  + ${JSON.stringify(k)}`);
    for (const k of removed) console.error(`  - ${JSON.stringify(k)}`);
    return 1;
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  console.log(`l10n-bundle: ${Object.keys(bundle).length} messages in ${BUNDLE_FILE}`);
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  process.exitCode = main(process.argv.slice(2));
