// Runs the extension-host mocha suite (dist/test/vscode/index.js, built by esbuild.mjs from test/vscode/*.ts)
// inside code-server's real Node extension host, and ends with `exthost: N passed, N failed`.
//
// How: the workbench is opened with a `payload` query parameter holding extensionDevelopmentPath +
// extensionTestsPath (the mechanism of VS Code for the web's "Extension Development Host" windows). A built
// 1.139 workbench honours these only when the server runs with `--vscode-option enable-smoke-test-driver`. When the
// suite's run() settles, the workbench calls window.codeAutomationExit(code); window.codeAutomationLog receives the
// extension host's console output. Both are exposed here with Playwright.
//
// env: CS_URL (required: the code-server URL), WS_DIR (folder to open; default: a fresh copy of
//      test/fixtures/workspace), EXT_DIR (extension root; default the repo), TESTS_PATH (default
//      EXT_DIR/dist/test/vscode/index), EXT_ENV (JSON object: extra env for the extension host),
//      TEST_TIMEOUT_MS (default 900000: a guard against a hung run, not a deadline for the suite, which takes about
//      2 minutes on an idle machine and longer on a loaded one), RESULTS (screenshot folder; default test-results), VERBOSE=1
import fs from 'node:fs';
import path from 'node:path';
import { format } from 'node:util';
import { ROOT, workspaceDir, launch, remoteUri, summary, workbenchUrl } from './launch.mjs';

const SUITE = 'exthost';
const base = process.env.CS_URL;
const extDir = process.env.EXT_DIR || ROOT;
const testsPath = process.env.TESTS_PATH || `${extDir}/dist/test/vscode/index`;
const timeoutMs = +(process.env.TEST_TIMEOUT_MS || 1800000);
const results = process.env.RESULTS || path.join(ROOT, 'test-results');

// Workbench chatter that is not test output.
const NOISE = new RegExp(
  [
    'ChatModelSelection',
    'AgentHost',
    'AccountPolicyGate',
    'connection token',
    'Creating a socket',
    'reconnection-grace-time',
    'builtin extensions cache',
    'Service Worker',
    'ENOTFOUND',
    'open-vsx',
    'Failed to load resource',
    'vsda',
    'mobile\\.events',
    'Creation of workbench contribution',
    '^Canceled',
    'github',
    '^\\s+at .*(?:https?://|\\(<anonymous>\\)$)', // stack frames of the workbench itself (gallery queries offline, canceled requests)
  ].join('|'),
  'i',
);
// The closing line the suite's index.ts prints.
const RESULT = /^comfy-exthost-result: (\d+) passed, (\d+) failed$/;

function cannotRun(why) {
  console.log(`${SUITE}: could not run: ${why}`);
  process.exit(summary(SUITE, 0, 1));
}

if (!base)
  cannotRun(
    'CS_URL is not set (start code-server with scripts/start-code-server.sh ... --vscode-option enable-smoke-test-driver)',
  );
if (!fs.existsSync(`${testsPath}.js`))
  cannotRun(`the suite is not built: ${testsPath}.js is missing (node esbuild.mjs builds it from test/vscode/*.ts)`);
if (!fs.existsSync(path.join(extDir, 'package.json'))) cannotRun(`no extension at ${extDir}`);

const ws = workspaceDir();
const payload = [
  ['extensionDevelopmentPath', remoteUri(base, extDir)],
  ['extensionTestsPath', remoteUri(base, testsPath)],
];
if (process.env.EXT_ENV) payload.push(['extensionEnvironment', process.env.EXT_ENV]);

const t0 = Date.now();
let browser;
try {
  browser = await launch();
} catch (e) {
  cannotRun(e.message);
}
const { page, close } = browser;
let counts;
let done;
const exited = new Promise((resolve) => (done = resolve));
let finished = false;
await page.exposeFunction('codeAutomationLog', (_type, args) => {
  if (finished) return;
  const text = format(...(Array.isArray(args) ? args : [args]));
  for (const line of text.split('\n')) {
    const m = RESULT.exec(line.trim());
    if (m) counts = { passed: +m[1], failed: +m[2] };
    else if (process.env.VERBOSE || !NOISE.test(line)) console.log(line);
  }
});
await page.exposeFunction('codeAutomationExit', (code) => done(code));
page.on('pageerror', (e) => console.log('[pageerror]', e.message));
const timer = setTimeout(() => done('timeout'), timeoutMs);
try {
  await page.goto(workbenchUrl(base, ws, payload));
} catch (e) {
  done(`navigation failed: ${e.message.split('\n')[0]}`);
}
const code = await exited;
finished = true;
clearTimeout(timer);
console.log(
  `extension host suite finished with ${typeof code === 'number' ? `code ${code}` : code} after ${Date.now() - t0} ms`,
);
fs.mkdirSync(results, { recursive: true });
await page.screenshot({ path: path.join(results, 'exthost-final.png') }).catch(() => {});
await close();

let passed = counts?.passed ?? 0;
let failed = counts?.failed ?? 0;
if (code !== 0 && failed === 0) {
  // The run ended badly without a failing test to show for it (timeout, load error, crash): count it.
  console.log(`${SUITE}: the suite did not complete normally (${code}); counted as 1 failed`);
  failed = 1;
}
if (!counts && code === 0) {
  console.log(`${SUITE}: the suite exited 0 but printed no result line; counted as 1 failed`);
  failed = 1;
}
process.exit(summary(SUITE, passed, failed));
