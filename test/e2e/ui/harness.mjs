// The harness of the UI suite (test/e2e/ui.mjs): importing it sets the stage, once, before any step: it checks the
// environment, starts the recorded emulator, points code-server's machine settings at it and launches the browser
// (a suite that cannot run ends here with `ui: 0 passed, 1 failed`). It exports what every step shares: the page,
// the emulator, the workspace folder, step() (counts, and on a failure a screenshot and the holds cleared), the
// waits (until, settled, pointerAway), settings writes the workbench has read, and finish() (the closing line).
//
// env: CS_URL, CS_USER_DATA (required: the emulator's URL is written into its settings), WS_DIR (folder to open;
//      default: a fresh copy of test/fixtures/workspace), RESULTS (default test-results), NODE_DELAY_MS (emulator
//      delay per node, default 0), STEP_TIMEOUT_MS (how long a step waits for any one condition, default 60000),
//      EXT_DEV_PATH (load the extension from this folder instead of the installed one; needs the smoke-test flag),
//      UI_STEPS (a regular expression: only the steps whose names match run, after the first)
/* global document -- in the functions evaluated in the page */
import fs from 'node:fs';
import path from 'node:path';
import { startRecordedEmulator } from '../emulator.mjs';
import { ROOT, workspaceDir, launch, remoteUri, summary } from '../launch.mjs';

const SUITE = 'ui';
export const base = process.env.CS_URL;
export const userData = process.env.CS_USER_DATA;
export const results = process.env.RESULTS || path.join(ROOT, 'test-results');
const nodeDelayMs = +(process.env.NODE_DELAY_MS || 0);
const stepTimeout = +(process.env.STEP_TIMEOUT_MS || 60000);

function cannotRun(why) {
  console.log(`${SUITE}: could not run: ${why}`);
  process.exit(summary(SUITE, 0, 1));
}
if (!base) cannotRun('CS_URL is not set (start code-server with scripts/start-code-server.sh)');
if (!userData || !fs.existsSync(userData))
  cannotRun(`CS_USER_DATA (code-server's --user-data-dir) is not set or missing: ${userData}`);

fs.mkdirSync(results, { recursive: true });
for (const f of fs.readdirSync(results)) if (/^ui-.*\.png$/.test(f)) fs.rmSync(path.join(results, f));

/** Merges `values` into a settings.json (plain JSON, as start-code-server.sh writes it). */
function seedSettings(file, values) {
  let current = {};
  try {
    current = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    // absent or not plain JSON: start over
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify({ ...current, ...values }, null, 2) + '\n');
}

export let emu;
let browser;
const cleanup = async () => {
  await browser?.close().catch(() => {});
  await emu?.close().catch(() => {});
};
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => void cleanup().finally(() => process.exit(1)));
}

try {
  emu = await startRecordedEmulator({ nodeDelayMs });
} catch (e) {
  cannotRun(`the emulator did not start: ${e.message}`);
}
console.log(`emulator ${emu.emulatorUrl} (recorded through ${emu.baseUrl}), node delay ${nodeDelayMs} ms`);
/** code-server's machine settings (where comfyCloud.baseUrl, a machine-scoped setting, is read from). */
export const machineSettings = path.join(userData, 'Machine', 'settings.json');
// comfyCloud.baseUrl is machine-scoped. In code-server the window is remote: machine-scoped settings live in the
// remote machine's settings, <user-data-dir>/Machine/settings.json (where the extension-host suite's
// ConfigurationTarget.Global update lands too; code-server also honours <user-data-dir>/User/settings.json).
// The fixture's workspace settings point at a dead port on purpose: the extension must ignore them.
// The job monitor opens on submit by default and takes the notifications' place: off for the steps that
// test the notifications; the monitor's steps (ui/monitor.mjs) turn it on.
seedSettings(machineSettings, {
  'comfyCloud.baseUrl': emu.baseUrl,
  'comfyCloud.openMonitorOnSubmit': false,
});

export const ws = workspaceDir();
export const payload = process.env.EXT_DEV_PATH
  ? [['extensionDevelopmentPath', remoteUri(base, process.env.EXT_DEV_PATH)]]
  : [];

try {
  browser = await launch();
} catch (e) {
  await cleanup();
  cannotRun(e.message);
}
export const { page } = browser;
page.setDefaultTimeout(stepTimeout);
page.on('pageerror', (e) => process.env.VERBOSE && console.log('[pageerror]', e.message));

let passed = 0;
let failed = 0;
let shot = 0;
export const screenshot = async (name) => {
  const file = path.join(results, `ui-${String(++shot).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file });
  return file;
};
/** UI_STEPS (a regular expression) runs only the steps it matches, and the first (the workbench), for iteration. */
const only = process.env.UI_STEPS ? new RegExp(process.env.UI_STEPS) : undefined;
export async function step(name, fn) {
  if (only && passed + failed > 0 && !only.test(name)) return;
  const t = Date.now();
  try {
    await fn();
    passed++;
    console.log(`ok   ${name} (${Date.now() - t} ms)`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e.message.split('\n').slice(0, 3).join(' | ')}`);
    await screenshot(`FAILED-${name.replace(/\W+/g, '-').slice(0, 40)}`).catch(() => {});
    // A job it held must not hold the steps after it.
    await emu.clearHolds().catch(() => {});
  }
}

export const toasts = page.locator('.notifications-toasts');
export const toast = (text) => toasts.locator('.notification-toast', { hasText: text });

/** How long a condition may take to hold (ms): a deadline, not a wait (the page's default timeout too). */
export const DEADLINE_MS = stepTimeout;

/**
 * Polls `check` until it returns something other than undefined, null or false, and returns that; fails after
 * `deadlineMs` with `what` (a string, or a function giving the state to show then). For conditions no event of the
 * page tells (a request at the emulator, an image's load, a computed color); the interval is the poll's.
 */
export async function until(what, check, deadlineMs = DEADLINE_MS) {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline)
      throw new Error(`not within ${deadlineMs / 1000} s: ${typeof what === 'function' ? await what() : what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Resolves once the workbench's finite animations and transitions have ended (a toast sliding in, a quick input or a
 * hover fading): before a picture. Infinite ones (spinners, progress bits) never end and are not waited for. For the
 * picture only: past 10 s it says which still run and goes on.
 */
export async function settled() {
  const finite = () =>
    document
      .getAnimations()
      .filter((a) => a.playState === 'running' && a.effect?.getComputedTiming().iterations !== Infinity).length === 0;
  await page.waitForFunction(finite, null, { polling: 100, timeout: 10000 }).catch(async () => {
    const running = await page.evaluate(() =>
      document
        .getAnimations()
        .filter((a) => a.playState === 'running')
        .map((a) => a.animationName ?? a.transitionProperty ?? '?'),
    );
    console.log(`     (animations still running before the picture: ${JSON.stringify(running)})`);
  });
}

/**
 * Moves the pointer to an empty spot, then waits until no hover shows and the workbench settled: a picture without a
 * stray hover. For the picture only: a hover still shown after 10 s is left in it.
 */
export async function pointerAway(x = 600, y = 450) {
  await page.mouse.move(x, y);
  const noHover = () =>
    ![...document.querySelectorAll('.monaco-hover, .workbench-hover')].some((el) =>
      el.checkVisibility({ opacityProperty: true, visibilityProperty: true }),
    );
  await page
    .waitForFunction(noHover, null, { polling: 100, timeout: 10000 })
    .catch(() => console.log('     (a hover still shows in the picture)'));
  await settled();
}

let settingsWrites = 0;
/**
 * Merges `values` into the settings file `file` and resolves once the workbench has read that write: the same write
 * sets `window.title` to a fresh marker, which the page's title then shows. The file is read whole, and the extension
 * host hears of the change before any command run after it (one ordered channel), so every value written is then in
 * effect for the commands that follow. No other event of a settings file reaches the page.
 */
export async function writeSettings(file, values) {
  // The folder's name as the title shows it, then the marker (the command center shows the title too).
  const marker = `(settings ${++settingsWrites})`;
  seedSettings(file, { ...values, 'window.title': `\${rootName} ${marker}` });
  await until(
    async () => `the workbench read the settings write ${marker} (page title: ${JSON.stringify(await page.title())})`,
    async () => (await page.title()).includes(marker),
  );
}

/**
 * Ends the suite: says how long it took (from `startedAt`, ms since the epoch) and where the screenshots are, closes
 * the browser and the emulator, and exits with the `ui: N passed, N failed` line.
 */
export async function finish(startedAt) {
  console.log(`ui suite took ${Date.now() - startedAt} ms; screenshots in ${results}`);
  await cleanup();
  process.exit(summary(SUITE, passed, failed));
}
