// UI test of the installed extension in a real VS Code workbench (code-server), driven with playwright-core in
// Debian's chromium: open the sample, run "Comfy Cloud: Submit Workflow" from the command palette, watch the
// progress notification, the success notification, "Open Output" opening the PNG; and a UI-format file being
// refused without a request. Screenshots of every step go to test-results/. Ends with `ui: N passed, N failed`.
//
// Run it against a plain code-server (NOT started with enable-smoke-test-driver: that hides notification toasts)
// that has the .vsix installed:
//   CS_URL=http://127.0.0.1:PORT CS_USER_DATA=<its --user-data-dir> node test/e2e/ui.mjs
// env: CS_URL, CS_USER_DATA (required: the emulator's URL is written into its settings), WS_DIR (folder to open;
//      default: a fresh copy of test/fixtures/workspace), RESULTS (default test-results), NODE_DELAY_MS (emulator
//      delay per node, default 0), STEP_TIMEOUT_MS (how long a step waits for any one condition, default 60000),
//      EXT_DEV_PATH (load the extension from this folder instead of the installed one; needs the smoke-test flag),
//      UI_STEPS (a regular expression: only the steps whose names match run, after the first)
//
// No step depends on the machine's speed. A step that looks at a running job holds it at a node through the
// emulator's control endpoint (emulator.mjs, src/emulator/holds.ts), looks, then releases it; every other wait is
// on an observable condition (an element, a request at the emulator, the window title after a settings write)
// with a generous deadline, never a fixed pause.
/* global document -- in the functions evaluated in the page */
import fs from 'node:fs';
import path from 'node:path';
import { startRecordedEmulator } from './emulator.mjs';
import { ROOT, workspaceDir, launch, remoteUri, summary, workbenchUrl } from './launch.mjs';

const SUITE = 'ui';
const base = process.env.CS_URL;
const userData = process.env.CS_USER_DATA;
const results = process.env.RESULTS || path.join(ROOT, 'test-results');
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

let emu;
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
// comfyCloud.baseUrl is machine-scoped. In code-server the window is remote: machine-scoped settings live in the
// remote machine's settings, <user-data-dir>/Machine/settings.json (where the extension-host suite's
// ConfigurationTarget.Global update lands too; code-server also honours <user-data-dir>/User/settings.json).
// The fixture's workspace settings point at a dead port on purpose: the extension must ignore them.
// The job monitor opens on submit by default and takes the notifications' place: off for the steps that
// test the notifications; its own block (at the end) turns it on.
seedSettings(path.join(userData, 'Machine', 'settings.json'), {
  'comfyCloud.baseUrl': emu.baseUrl,
  'comfyCloud.openMonitorOnSubmit': false,
});

const ws = workspaceDir();
const payload = process.env.EXT_DEV_PATH
  ? [['extensionDevelopmentPath', remoteUri(base, process.env.EXT_DEV_PATH)]]
  : [];

try {
  browser = await launch();
} catch (e) {
  await cleanup();
  cannotRun(e.message);
}
const { page } = browser;
page.setDefaultTimeout(stepTimeout);
page.on('pageerror', (e) => process.env.VERBOSE && console.log('[pageerror]', e.message));

let passed = 0;
let failed = 0;
let shot = 0;
const screenshot = async (name) => {
  const file = path.join(results, `ui-${String(++shot).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file });
  return file;
};
/** UI_STEPS (a regular expression) runs only the steps it matches, and the first (the workbench), for iteration. */
const only = process.env.UI_STEPS ? new RegExp(process.env.UI_STEPS) : undefined;
async function step(name, fn) {
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

const toasts = page.locator('.notifications-toasts');
const toast = (text) => toasts.locator('.notification-toast', { hasText: text });

/** How long a condition may take to hold (ms): a deadline, not a wait (the page's default timeout too). */
const DEADLINE_MS = stepTimeout;

/**
 * Polls `check` until it returns something other than undefined, null or false, and returns that; fails after
 * `deadlineMs` with `what` (a string, or a function giving the state to show then). For conditions no event of the
 * page tells (a request at the emulator, an image's load, a computed color); the interval is the poll's.
 */
async function until(what, check, deadlineMs = DEADLINE_MS) {
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
async function settled() {
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
async function pointerAway(x = 600, y = 450) {
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
async function writeSettings(file, values) {
  // The folder's name as the title shows it, then the marker (the command center shows the title too).
  const marker = `(settings ${++settingsWrites})`;
  seedSettings(file, { ...values, 'window.title': `\${rootName} ${marker}` });
  await until(
    async () => `the workbench read the settings write ${marker} (page title: ${JSON.stringify(await page.title())})`,
    async () => (await page.title()).includes(marker),
  );
}

/**
 * Chooses `item` (an entry of an open context menu) as a person would with pointer and keyboard: hovers it until the
 * menu shows it focused, then presses Enter, and waits for the menu to close. (A click that lands while the menu still
 * lays out only highlights the entry; a focused entry and Enter always choose it.)
 */
async function chooseMenuEntry(item) {
  const menu = page.locator('.monaco-menu').first();
  await until('the menu entry focused under the pointer', async () => {
    await item.hover();
    return (await item.getAttribute('class'))?.split(/\s+/).includes('focused');
  });
  await page.keyboard.press('Enter');
  await menu.waitFor({ state: 'detached' });
}

async function quickOpen(file) {
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible' });
  await input.fill(file);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: file }).first().waitFor();
  await page.keyboard.press('Enter');
  await page.locator('.tabs-container .tab.active', { hasText: file }).waitFor();
  await page.locator('.monaco-editor .view-lines').first().waitFor();
}

async function palette(command) {
  const input = page.locator('.quick-input-widget input');
  for (let attempt = 1; ; attempt++) {
    try {
      await page.keyboard.press('F1');
      await input.waitFor({ state: 'visible', timeout: 20000 });
      await input.fill('>' + command, { timeout: 10000 });
      const row = page.locator('.quick-input-list .monaco-list-row', { hasText: command }).first();
      await row.waitFor({ timeout: 20000 });
      await page.keyboard.press('Enter');
      break;
    } catch (err) {
      // The quick input closes when something takes the focus between the key and the typing (a webview that just
      // opened, a notification): it is opened again, a bounded number of times.
      if (attempt >= 3) throw err;
      console.log(`     palette "${command}" again (${String(err.message ?? err).split('\n')[0]})`);
      await page.keyboard.press('Escape');
    }
  }
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
}

/**
 * Runs a palette command that asks something through a quick input of its own (palette() waits for the palette to
 * close); resolves once the quick input shows `text` (its title, prompt or an item).
 */
async function paletteAsking(command, text) {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible' });
  await input.fill('>' + command);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: command }).first().waitFor();
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget', { hasText: text }).waitFor();
}

/**
 * "Preferences: Color Theme", then the theme `label`, as a person picks it; resolves with the theme that was current
 * (to go back to it).
 */
async function pickColorTheme(label) {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible' });
  await input.fill('>Preferences: Color Theme');
  // That command exactly (not "Browse Color Themes in Marketplace", which may rank first).
  const command = page
    .locator('.quick-input-list .monaco-list-row .label-name', { hasText: /^Preferences: Color Theme$/ })
    .first();
  await command.waitFor();
  await command.click();
  // The theme picker replaces the palette in the same widget: its placeholder says so.
  await page.locator('.quick-input-widget input[placeholder*="Color Theme"]').waitFor();
  // The picker opens on the current theme: its name, to go back to it.
  const current = (
    await page
      .locator('.quick-input-list .monaco-list-row.focused .label-name')
      .first()
      .innerText()
      .catch(() => '')
  ).trim();
  await input.fill(label);
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first();
  await row.waitFor();
  await row.click();
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
  return current;
}

/** Opens the walkthrough "Get Started with Comfy Cloud" (Welcome: Open Walkthrough) and returns its container. */
async function openWalkthrough() {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible' });
  await input.fill('>Welcome: Open Walkthrough');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Open Walkthrough' }).first().waitFor();
  await page.keyboard.press('Enter');
  const choice = page
    .locator('.quick-input-list .monaco-list-row', { hasText: 'Get Started with Comfy Cloud' })
    .first();
  await choice.waitFor();
  await choice.click();
  const walkthrough = page.locator('.gettingStartedContainer', { hasText: 'Get Started with Comfy Cloud' });
  await walkthrough.waitFor();
  return walkthrough;
}

/** The active editor (the first editor instance). */
const editor = () => page.locator('.editor-instance .monaco-editor').first();
/** The editor's suggest widget (completion list). */
const suggest = page.locator('.editor-widget.suggest-widget');

/** Puts the cursor at the end of line `n` of the active editor (Quick Open's `:n`, then End), then `left` characters to the left. */
async function gotoLineEnd(n, left = 0) {
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible' });
  await input.fill(`:${n}`);
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
  await page.keyboard.press('End');
  for (let i = 0; i < left; i++) await page.keyboard.press('ArrowLeft');
}

/**
 * Opens completion and returns the suggest widget's labels, once it lists a row with `text`. A request answered
 * without it (the language service still starting: "No suggestions", or other rows) is asked again, until the deadline.
 */
async function suggestions(text) {
  const wanted = suggest.locator('.monaco-list-row', { hasText: text }).first();
  const answered = suggest
    .locator('.monaco-list-row')
    .first()
    .or(suggest.locator('.message', { hasText: /No suggestions/i }));
  await until(`a completion item ${JSON.stringify(text)}`, async () => {
    await page.keyboard.press('Control+Space');
    await answered.first().waitFor();
    if (await wanted.isVisible()) return true;
    await page.keyboard.press('Escape');
    await suggest.waitFor({ state: 'hidden' });
    return false;
  });
  return await suggest.locator('.monaco-list-row .label-name').allInnerTexts();
}

/** Takes the completion `label`, filtered by typing `typed` first, as a person would. */
async function acceptSuggestion(typed, label) {
  await page.keyboard.type(typed);
  await suggest.locator('.monaco-list-row.focused', { hasText: label }).waitFor();
  await page.keyboard.press('Enter');
}

async function clearNotifications() {
  await palette('Notifications: Clear All Notifications').catch(() => page.keyboard.press('Escape'));
  // Every step clears them once its jobs ended: then no toast is left (a running job's progress one would stay).
  await toasts
    .locator('.notification-toast')
    .first()
    .waitFor({ state: 'detached' })
    .catch(() => console.log('     (a notification is still shown after Clear All)'));
}

/**
 * The id of the job submitted since request `from` (the submission's answer names it; the extension's next request of
 * the job, its event stream or a GET, carries it in the URL).
 */
function submittedJobId(from) {
  return until(
    () =>
      `no request named the submitted job: ${JSON.stringify(emu.requests.slice(from).map((r) => `${r.method} ${r.url}`))}`,
    () => {
      for (const r of emu.requests.slice(from)) {
        const m = /\/api\/v2\/jobs\/([^/?]+)/.exec(r.url);
        if (m) return decodeURIComponent(m[1]);
      }
      return undefined;
    },
  );
}

/** Waits until the <img> `img` (a locator) has loaded a picture; resolves with its natural [width, height]. */
async function loadedImage(img) {
  await img.waitFor({ state: 'attached' });
  return until('the image loaded', async () => {
    const [width, height, complete] = await img.evaluate((el) => [el.naturalWidth, el.naturalHeight, el.complete]);
    return complete && width > 0 ? [width, height] : undefined;
  });
}

/** An API-format workflow: EmptyImage (64×64, `color`), `inverts` ImageInverts in a chain, then SaveImage `prefix`. */
function invertChain(inverts, prefix, color = 255) {
  const workflow = { 1: { class_type: 'EmptyImage', inputs: { width: 64, height: 64, batch_size: 1, color } } };
  for (let i = 2; i <= inverts + 1; i++)
    workflow[i] = { class_type: 'ImageInvert', inputs: { image: [String(i - 1), 0] } };
  workflow[inverts + 2] = {
    class_type: 'SaveImage',
    inputs: { images: [String(inverts + 1), 0], filename_prefix: prefix },
  };
  return workflow;
}

const t0 = Date.now();
let jobsBefore = 0;

await step('workbench loads with the fixture workspace', async () => {
  await page.goto(workbenchUrl(base, ws, payload));
  await page.locator('.monaco-workbench').waitFor({ timeout: 90000 });
  await page.locator('.statusbar').waitFor();
  await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'invert.json' }).waitFor();
  await screenshot('workbench');
});

await step(
  'the status bar shows the connection from start-up, before the Comfy Cloud sidebar is ever opened (activation on onStartupFinished)',
  async () => {
    // Nothing of the extension was touched yet: no command, no view, no Comfy Cloud file type opened.
    const sidebarTitle = page.locator('.part.sidebar .composite.title', { hasText: 'Comfy Cloud' });
    if (await sidebarTitle.isVisible())
      throw new Error('the Comfy Cloud sidebar is open already: the step would prove nothing');
    const item = page.locator('.statusbar-item[id$="comfyCloud.connection"]');
    await item.waitFor();
    const label = await item
      .locator('a')
      .first()
      .getAttribute('aria-label')
      .catch(() => null);
    console.log(`     status bar at start-up: ${label}`);
    if (await sidebarTitle.isVisible()) throw new Error('the sidebar opened on its own');
    await pointerAway();
    await screenshot('startup-status-bar');
  },
);

await step('quick open shows invert.json in an editor', async () => {
  await quickOpen('invert.json');
  await page.locator('.monaco-editor .view-lines', { hasText: 'EmptyImage' }).waitFor();
  await screenshot('invert-json-open');
});

await step('"Comfy Cloud: Submit Workflow" from the command palette shows a progress notification', async () => {
  jobsBefore = emu.requests.length;
  // The job holds at its second node (ImageInvert) until the notification has been seen: running, with a Cancel button.
  await emu.holdNodes({ classTypes: ['ImageInvert'] });
  await palette('Comfy Cloud: Submit Workflow');
  await emu.heldAt(undefined, 1);
  const progress = toast(/Comfy Cloud: invert\.json[\s\S]*running/);
  await progress.waitFor();
  await progress.getByRole('button', { name: 'Cancel' }).waitFor();
  await settled(); // slid in: the picture shows it whole
  await screenshot('progress');
});

await step('the success notification says the job succeeded and offers "Open Output"', async () => {
  await emu.clearHolds(); // the job of the step before runs on
  const done = toast(/job \S+ succeeded — 1 output saved/);
  await done.waitFor();
  await done.getByRole('button', { name: 'Open Output' }).waitFor();
  const posts = emu.requests.slice(jobsBefore).filter((r) => r.method === 'POST' && /\/jobs/.test(r.url));
  if (posts.length !== 1)
    throw new Error(
      `expected one job submission at the emulator, saw ${JSON.stringify(emu.requests.slice(jobsBefore))}`,
    );
  await screenshot('success-notification');
});

await step('"Open Output" opens the 64×64 PNG in an image preview tab', async () => {
  await toast(/succeeded/)
    .getByRole('button', { name: 'Open Output' })
    .click();
  const tab = page.locator('.tabs-container .tab.active', { hasText: /invert_\d+_?\.png/ });
  await tab.waitFor();
  const title = (await tab.innerText()).replace(/\s+/g, '');
  // VS Code's image preview is a webview: outer iframe (host) → inner iframe (content) → <img>.
  const img = page
    .locator('iframe.webview.ready')
    .last()
    .contentFrame()
    .locator('iframe#active-frame')
    .contentFrame()
    .locator('img');
  const size = await loadedImage(img.first());
  if (size[0] !== 64 || size[1] !== 64) throw new Error(`image preview shows ${size[0]}×${size[1]}, expected 64×64`);
  console.log(`     tab "${title}", <img> ${size[0]}×${size[1]}`);
  const saved = fs
    .readdirSync(path.join(ws, '.comfy', 'outputs'), { recursive: true })
    .filter((f) => String(f).endsWith('.png'));
  if (saved.length !== 1)
    throw new Error(`expected one PNG under ${ws}/.comfy/outputs, found ${JSON.stringify(saved)}`);
  await screenshot('output-png-open');
});

await step('Cancel on the progress notification cancels the job on the server (POST cancel)', async () => {
  await clearNotifications();
  // The image preview (a webview) has the focus: click the workflow's tab rather than typing Ctrl+P into it.
  await page.locator('.tabs-container .tab', { hasText: 'invert.json' }).click();
  await page.locator('.tabs-container .tab.active', { hasText: 'invert.json' }).waitFor();
  const from = emu.requests.length;
  // Held at its first node: the job is running when Cancel is pressed, however long the notification takes to show.
  await emu.holdNodes({});
  try {
    await palette('Comfy Cloud: Submit Workflow');
    await emu.heldAt(undefined, 0);
    const progress = toast(/Comfy Cloud: invert\.json[\s\S]*running/);
    await progress.waitFor();
    await progress.getByRole('button', { name: 'Cancel' }).click();
    const canceled = toast(/job \S+ was canceled/);
    await canceled.waitFor();
  } finally {
    await emu.clearHolds();
  }
  const sent = emu.requests.slice(from);
  const cancel = sent.filter((r) => r.method === 'POST' && /\/jobs\/[^/]+\/cancel/.test(r.url));
  if (cancel.length !== 1)
    throw new Error(
      `expected one POST …/cancel at the emulator, saw ${JSON.stringify(sent.map((r) => `${r.method} ${r.url}`))}`,
    );
  await pointerAway();
  await screenshot('canceled');
});

await step('a UI-format workflow is refused with a message naming API format, and nothing is sent', async () => {
  await clearNotifications();
  await quickOpen('ui-format.json');
  await page.locator('.monaco-editor .view-lines', { hasText: 'last_node_id' }).waitFor();
  const from = emu.requests.length;
  await palette('Comfy Cloud: Submit Workflow');
  const error = toast(/UI-format workflow/);
  await error.waitFor();
  const text = await error.innerText();
  if (!/API/.test(text)) throw new Error(`the message does not name API format: ${text}`);
  // The command decides before it would send anything and shows the message last: by now any request was made.
  const sent = emu.requests.slice(from);
  if (sent.length) throw new Error(`requests reached the emulator: ${JSON.stringify(sent)}`);
  // Show the whole message (a long one without buttons is collapsed to one line) for the screenshot: expand it, mouse
  // out of the way. Its toolbar (with the expand button) shows only while the pointer is on the toast, and the toast
  // re-renders as it settles (CI once lost the button between seeing and clicking it): hover again and retry. This is
  // for the picture only; the message's text was checked above.
  const expand = error.locator('.codicon-notifications-expand').first();
  for (let i = 0; i < 3; i++) {
    await error.hover();
    if (!(await expand.isVisible())) break;
    if (
      await expand.click({ timeout: 1500 }).then(
        () => true,
        () => false,
      )
    )
      break;
  }
  await pointerAway();
  await screenshot('ui-format-refused');
});

await step(
  'an invalid_workflow puts the missing input on its own node in Problems (not on a later node with that field)',
  async () => {
    await clearNotifications();
    await quickOpen('missing-input.json');
    await page.locator('.monaco-editor .view-lines', { hasText: 'ImageInvert' }).waitFor();
    await palette('Comfy Cloud: Submit Workflow');
    await toast(/invalid/).waitFor();
    await palette('View: Focus Problems');
    // Node "2" (line 3) lacks `image`; node "3" (line 4) has one: the entry belongs on line 3.
    const row = page.locator('.markers-panel .monaco-list-row', { hasText: /image/ }).first();
    await row.waitFor();
    const text = (await row.innerText()).replace(/\s+/g, ' ');
    if (!/\[Ln 3, Col \d+\]/.test(text)) throw new Error(`the Problems entry is not on node "2" (line 3): ${text}`);
    console.log(`     Problems: ${text}`);
    await pointerAway(600, 300);
    await screenshot('problems-missing-input');
  },
);

await step(
  'the Comfy Cloud sidebar opens from its activity-bar icon and lists the jobs submitted here (Running / Recent)',
  async () => {
    await clearNotifications();
    await page.locator('.activitybar .action-item a[aria-label^="Comfy Cloud"]').first().click();
    const recent = page.locator('.pane-body .monaco-list-row', { hasText: 'Recent' });
    await recent.waitFor();
    // The succeeded and the canceled run of invert.json, both under Recent.
    const rows = page.locator('.pane-body .monaco-list-row', { hasText: 'invert.json' });
    await rows.nth(1).waitFor();
    const texts = (await rows.allInnerTexts()).map((t) => t.replace(/\s+/g, ' '));
    console.log(`     jobs: ${JSON.stringify(texts)}`);
    await pointerAway();
    await screenshot('jobs-view');
  },
);

// --- Assets: upload from the Explorer's context menu, the Assets view shows it; the
// same file again says no bytes were sent. ---------------------------------------------------------------------------
const assetFile = 'upload-me.png';
/**
 * `row` in the Explorer, shown: the Explorer draws only the rows in view, so once the earlier steps' output folders
 * push a file below them, the folders are collapsed (once) to bring it back into view.
 */
async function explorerRow(row) {
  await palette('View: Show Explorer');
  try {
    await row.waitFor({ timeout: 5000 });
  } catch {
    // A file just written may not be seen yet (the server's file watcher can lag on a busy machine): read the folder
    // again, as a user would with the Explorer's Refresh.
    await palette('Collapse Folders in Explorer');
    await palette('Refresh Explorer');
    await row.waitFor();
  }
  return row;
}
/** The Explorer's context menu on `name`, then its entry `entry`. */
async function explorerMenu(name, entry) {
  const row = await explorerRow(page.locator('.explorer-folders-view .monaco-list-row', { hasText: name }).first());
  await row.click({ button: 'right' });
  const item = page.locator('.monaco-menu .action-item', { hasText: entry }).first();
  await item.waitFor();
  await chooseMenuEntry(item);
}
/** Opens a workspace file from the Explorer (Quick Open's file index can miss a file just written). */
async function openFile(name) {
  const exact = new RegExp(`^\\s*${name.replace(/\./g, '\\.')}\\s*$`);
  const row = await explorerRow(page.locator('.explorer-folders-view .monaco-list-row', { hasText: exact }).first());
  await row.click();
  await page.locator('.tabs-container .tab.active', { hasText: exact }).waitFor();
  await page.locator('.monaco-editor .view-lines').first().waitFor();
}
/**
 * Expands the Comfy Cloud views named in `open` and collapses its others (Jobs, Assets, Models), so the ones open get
 * the sidebar's height (a tree draws only the rows in view); resolves with a function that puts them back as they were.
 */
async function onlyViews(...open) {
  const changed = [];
  for (const name of ['Jobs', 'Assets', 'Models']) {
    const header = page.locator('.part.sidebar .pane-header', { hasText: new RegExp(`^\\s*${name}`) }).first();
    if (((await header.getAttribute('aria-expanded')) === 'true') !== open.includes(name)) {
      await header.click();
      changed.push(header);
    }
  }
  return async () => {
    for (const header of changed) await header.click();
  };
}
/** Opens the Comfy Cloud sidebar (from the Explorer, so the icon's click opens it rather than closing it). */
async function showComfySidebar() {
  await palette('View: Show Explorer');
  await page.locator('.activitybar .action-item a[aria-label^="Comfy Cloud"]').first().click();
}
const assetUploads = (from) =>
  emu.requests.slice(from).filter((r) => r.method === 'POST' && /\/api\/v2\/assets(\?|$)/.test(r.url));

await step(
  'right-click a file in the Explorer → "Upload to Comfy Cloud": uploaded, and the Assets view shows it',
  async () => {
    await clearNotifications();
    // A 1×1 PNG with a random tail: bytes no server has seen.
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC',
      'base64',
    );
    fs.writeFileSync(path.join(ws, assetFile), Buffer.concat([png, Buffer.from(String(Date.now()))]));
    const from = emu.requests.length;
    await explorerMenu(assetFile, 'Upload to Comfy Cloud');
    await toast(/uploaded upload-me\.png \(\d+ B\)/).waitFor();
    if (assetUploads(from).length !== 1)
      throw new Error(`expected one multipart upload, saw ${JSON.stringify(emu.requests.slice(from))}`);
    await showComfySidebar();
    const row = page.locator('.pane-body .monaco-list-row', { hasText: assetFile }).first();
    await row.waitFor();
    const text = (await row.innerText()).replace(/\s+/g, ' ');
    if (!/image\/png · [0-9a-f]{12}/.test(text))
      throw new Error(`the Assets row does not show type and short hash: ${text}`);
    console.log(`     assets: ${text}`);
    await pointerAway();
    await screenshot('assets-view');
  },
);

await step('uploading the same file again says it is already there: no bytes sent (none sent)', async () => {
  await clearNotifications();
  const from = emu.requests.length;
  await explorerMenu(assetFile, 'Upload to Comfy Cloud');
  const said = toast(/upload-me\.png is already there: no bytes sent/);
  await said.waitFor();
  if (assetUploads(from).length !== 0)
    throw new Error(`bytes were sent again: ${JSON.stringify(emu.requests.slice(from))}`);
  await showComfySidebar();
  const row = page.locator('.pane-body .monaco-list-row', { hasText: /already there: no bytes sent/ }).first();
  await row.waitFor();
  // Its tooltip (hash, size, "Upload: already there") in the picture too, when the hover shows in time (for the
  // picture only).
  await row.hover();
  await page
    .locator('.monaco-hover', { hasText: 'Asset id' })
    .first()
    .waitFor({ timeout: 10000 })
    .catch(() => {});
  await settled();
  await screenshot('assets-dedup');
});
// --- end of Assets ----------------------------------------------------------------------------------------------------
// --- Jobs view: a job's children ----------------------------------------------------------------------------------
await step(
  'Jobs view: expanding a succeeded job shows its output and workflow; the workflow opens in a read-only tab',
  async () => {
    await clearNotifications();
    // The row's aria-label is the item's accessibilityInformation: label, status spelled out, description.
    const job = page
      .locator('.pane-body .monaco-list-row[aria-label*="succeeded"]', { hasText: 'invert.json' })
      .first();
    // The previous step opened the sidebar; clicking its icon again would close it.
    if (!(await job.isVisible()))
      await page.locator('.activitybar .action-item a[aria-label^="Comfy Cloud"]').first().click();
    await job.waitFor();
    if ((await job.getAttribute('aria-expanded')) !== 'true') await job.click();
    const workflow = page.locator('.pane-body .monaco-list-row', { hasText: /^\s*Workflow\s*$/ }).first();
    await workflow.waitFor();
    await page
      .locator('.pane-body .monaco-list-row', { hasText: /invert_\d+_?\.png/ })
      .first()
      .waitFor();
    await workflow.click();
    await page.locator('.tabs-container .tab.active', { hasText: 'workflow.api.json' }).waitFor();
    const editor = page.locator('.editor-instance .monaco-editor').first();
    await editor.locator('.view-lines', { hasText: 'EmptyImage' }).waitFor();
    // Typing into it is refused: the document is read-only.
    await editor.locator('.view-lines').click();
    await page.keyboard.type('x');
    await page.locator('.monaco-editor-overlaymessage', { hasText: /read-only/i }).waitFor();
    const text = await editor.locator('.view-lines').innerText();
    if (/^x/m.test(text) && !/EmptyImage/.test(text)) throw new Error('the workflow document took an edit');
    await pointerAway();
    await screenshot('jobs-children');
  },
);
// --- end of the Jobs view's children -------------------------------------------------------------------------------
// --- Jobs view, live: a submitted job appears, moves to succeeded live without any refresh action, and shows its
// output child; clicking the output opens the PNG; Cancel from the tree ends a running emulator job as canceled ------
{
  /** The row of a job: its aria-label starts with "<file> <short id>," (label, then status words, then description). */
  const jobRow = (file, jobId, status) => {
    const escaped = `${file} ${jobId.slice(0, 8)}`.replace(/"/g, '\\"');
    return page.locator(`.pane-body .monaco-list-row[aria-label^="${escaped}, ${status ?? ''}"]`).first();
  };
  /** The rows of the list a row is in (the Jobs tree: the Assets tree has rows with the same indexes), by data-index. */
  const siblingsOf = (row) =>
    row.evaluate((el) =>
      [...el.closest('.monaco-list').querySelectorAll('.monaco-list-row')]
        .map((r) => ({
          index: +r.getAttribute('data-index'),
          level: +r.getAttribute('aria-level'),
          label: r.getAttribute('aria-label') ?? '',
          text: r.innerText,
        }))
        .sort((a, b) => a.index - b.index),
    );
  /** The group (Running / Recent) a row is under: the nearest level-1 row above it. */
  const groupOfRow = async (row) => {
    const index = +(await row.getAttribute('data-index'));
    const groups = (await siblingsOf(row)).filter((r) => r.level === 1 && r.index < index);
    return groups.at(-1)?.label ?? '';
  };
  /** The rows directly under a job row (its children). */
  const childrenOfRow = async (row) => {
    const index = +(await row.getAttribute('data-index'));
    const level = +(await row.getAttribute('aria-level'));
    const out = [];
    for (const r of (await siblingsOf(row)).filter((r) => r.index > index)) {
      if (r.level <= level) break;
      if (r.level === level + 1) out.push(r);
    }
    return out;
  };
  /**
   * Opens a workspace file from the Explorer (Quick Open's file index can miss a file just written) and shows the
   * Comfy Cloud sidebar again (from the Explorer, so the icon's click opens it).
   */
  const openFromExplorer = async (name) => {
    await openFile(name);
    await page.locator('.activitybar .action-item a[aria-label^="Comfy Cloud"]').first().click();
    await page.locator('.part.sidebar .composite.title', { hasText: 'Comfy Cloud' }).first().waitFor();
  };
  const listings = (from) =>
    emu.requests.slice(from).filter((r) => r.method === 'GET' && /\/api\/v2\/jobs(\?|$)/.test(r.url));
  const cancels = (from, jobId) =>
    emu.requests
      .slice(from)
      .filter((r) => r.method === 'POST' && r.url.includes(`/jobs/${encodeURIComponent(jobId)}/cancel`));
  let liveJobId;
  let liveFrom = 0;

  await step(
    'Jobs view, live: a job submitted while the sidebar shows appears under Running with a spinning icon and its progress',
    async () => {
      await clearNotifications();
      await palette('View: Close All Editors');
      await openFromExplorer('invert.json');
      await page.locator('.pane-body .monaco-list-row', { hasText: 'Recent' }).first().waitFor();
      liveFrom = emu.requests.length;
      // Held at its second node (ImageInvert) until the next step: the row is seen running, with that node's progress.
      await emu.holdNodes({ classTypes: ['ImageInvert'] });
      await palette('Comfy Cloud: Submit Workflow');
      const held = await emu.heldAt(undefined, 1);
      liveJobId = held.jobId;
      const running = jobRow('invert.json', liveJobId, 'running');
      await running.waitFor();
      const group = await groupOfRow(running);
      if (!/^Running/.test(group)) throw new Error(`the running job is under "${group}", not Running`);
      await running.locator('.codicon-sync.codicon-modifier-spin').first().waitFor();
      // Its description is the progress ("33% · ImageInvert 2/3"), in the row's text and its accessible label.
      const percent = `${Math.floor((held.index / held.total) * 100)}%`;
      await until(
        async () =>
          `the running row shows ${percent} at ${held.classType}: ${await running.getAttribute('aria-label')}`,
        async () => {
          const label = (await running.getAttribute('aria-label')) ?? '';
          return label.includes(percent) && label.includes(held.classType);
        },
      );
      const label = await running.getAttribute('aria-label');
      console.log(`     running: ${label} (under "${group}")`);
      await pointerAway();
      await screenshot('jobs-live-running');
    },
  );

  await step(
    'Jobs view, live: the same row shows succeeded under Recent with no refresh (no listing request), then its output child opens the PNG',
    async () => {
      if (!liveJobId) throw new Error('no job was submitted by the previous step');
      await emu.clearHolds(); // the job held by the step before runs on
      const succeeded = jobRow('invert.json', liveJobId, 'succeeded');
      await succeeded.waitFor();
      const sinceSubmit = emu.requests.slice(liveFrom);
      const group = await groupOfRow(succeeded);
      if (!/^Recent/.test(group)) throw new Error(`the succeeded job is under "${group}", not Recent`);
      await succeeded.locator('.codicon-pass').first().waitFor();
      // "No refresh": Refresh (comfyCloud.refreshJobs), and any reload of the view, lists the jobs (GET …/api/v2/jobs?limit=…).
      // From the submission to the row showing succeeded there was none: the row followed the job's own requests
      // (its submission and event stream) alone.
      const listed = sinceSubmit.filter((r) => r.method === 'GET' && /\/api\/v2\/jobs(\?|$)/.test(r.url));
      if (listed.length)
        throw new Error(
          `the jobs were listed again while the job ran: ${JSON.stringify(sinceSubmit.map((r) => `${r.method} ${r.url}`))}`,
        );
      const followed = sinceSubmit.filter(
        (r) => r.method === 'GET' && r.url.includes(`/jobs/${encodeURIComponent(liveJobId)}`),
      );
      if (!followed.length) throw new Error('the job was never read after its submission: how did the row update?');
      console.log(
        `     requests from the submission to "succeeded": ${JSON.stringify(sinceSubmit.map((r) => `${r.method} ${r.url.replace(/\?.*/, '?…')}`))}`,
      );
      const from = emu.requests.length;
      if ((await succeeded.getAttribute('aria-expanded')) !== 'true') await succeeded.click();
      let children = [];
      const output = await until(
        () => `the job's children show no output: ${JSON.stringify(children.map((c) => c.text))}`,
        async () => (children = await childrenOfRow(succeeded)).find((c) => /invert_\d+_?\.png/.test(c.text)),
      );
      console.log(`     children: ${JSON.stringify(children.map((c) => c.text.replace(/\s+/g, ' ')))}`);
      await pointerAway();
      await screenshot('jobs-live-succeeded');
      if (listings(from).length)
        throw new Error(`expanding the job listed the jobs: ${JSON.stringify(listings(from))}`);
      const name = /invert_\d+_?\.png/.exec(output.text)[0];
      await succeeded
        .locator('xpath=ancestor::div[contains(@class,"monaco-list-rows")]')
        .locator(`.monaco-list-row[data-index="${output.index}"]`)
        .click();
      const tab = page.locator('.tabs-container .tab.active', { hasText: name });
      await tab.waitFor();
      const img = page
        .locator('iframe.webview.ready')
        .last()
        .contentFrame()
        .locator('iframe#active-frame')
        .contentFrame()
        .locator('img');
      const size = await loadedImage(img.first());
      if (size[0] !== 64 || size[1] !== 64)
        throw new Error(`the image tab shows ${size[0]}×${size[1]}, expected 64×64`);
      console.log(`     tab "${name}", <img> ${size[0]}×${size[1]}`);
      await pointerAway();
      await screenshot('jobs-output-open');
    },
  );

  await step(
    'Jobs view: right-click a running job → "Cancel Job" ends it as canceled (POST …/cancel at the emulator)',
    async () => {
      await clearNotifications();
      // Its own file, so its row stands apart from invert.json's; held at its first node until canceled.
      fs.writeFileSync(path.join(ws, 'held-invert.json'), JSON.stringify(invertChain(2, 'held'), null, 2) + '\n');
      await openFromExplorer('held-invert.json');
      const from = emu.requests.length;
      await emu.holdNodes({});
      let canceled;
      let jobId;
      try {
        await palette('Comfy Cloud: Submit Workflow');
        ({ jobId } = await emu.heldAt(undefined, 0));
        const running = jobRow('held-invert.json', jobId, 'running');
        await running.waitFor();
        if (!/^Running/.test(await groupOfRow(running))) throw new Error('the held job is not under Running');
        await running.click({ button: 'right' });
        const item = page.locator('.monaco-menu .action-item', { hasText: 'Cancel Job' }).first();
        await item.waitFor();
        await chooseMenuEntry(item);
        canceled = jobRow('held-invert.json', jobId, 'canceled');
        await canceled.waitFor();
      } finally {
        await emu.clearHolds();
      }
      const group = await groupOfRow(canceled);
      if (!/^Recent/.test(group)) throw new Error(`the canceled job is under "${group}", not Recent`);
      const sent = cancels(from, jobId);
      if (sent.length !== 1)
        throw new Error(
          `expected one POST …/jobs/${jobId}/cancel, saw ${JSON.stringify(emu.requests.slice(from).map((r) => `${r.method} ${r.url}`))}`,
        );
      console.log(
        `     ${await canceled.getAttribute('aria-label')} (under "${group}"); ${sent[0].method} ${sent[0].url} → ${sent[0].status}`,
      );
      await canceled.click(); // selected, so it stands out in the picture
      await pointerAway();
      await screenshot('jobs-cancel-from-tree');
    },
  );

  await step(
    'Jobs view: a job the server no longer knows (the emulator restarted mid-job) is lost under Recent, with Re-run and Remove from List, no Cancel',
    async () => {
      await clearNotifications();
      fs.writeFileSync(path.join(ws, 'lost-invert.json'), JSON.stringify(invertChain(2, 'lost'), null, 2) + '\n');
      await openFromExplorer('lost-invert.json');
      await emu.holdNodes({});
      let jobId;
      try {
        await palette('Comfy Cloud: Submit Workflow');
        ({ jobId } = await emu.heldAt(undefined, 0));
        await jobRow('lost-invert.json', jobId, 'running').waitFor();
      } finally {
        // A new emulator behind the same address, which never heard of the job (its holds went with the old one).
        await emu.restart();
      }
      const lost = jobRow('lost-invert.json', jobId, 'lost');
      await lost.waitFor();
      const group = await groupOfRow(lost);
      if (!/^Recent/.test(group)) throw new Error(`the lost job is under "${group}", not Recent`);
      console.log(`     ${await lost.getAttribute('aria-label')} (under "${group}")`);
      await lost.click({ button: 'right' });
      const menu = page.locator('.monaco-menu').first();
      await menu.locator('.action-item', { hasText: 'Remove from List' }).first().waitFor();
      const entries = (await menu.locator('.action-item').allInnerTexts()).map((e) => e.trim()).filter(Boolean);
      console.log(`     its menu: ${JSON.stringify(entries)}`);
      if (entries.some((e) => /^Cancel/.test(e)))
        throw new Error(`the lost job's menu offers Cancel: ${JSON.stringify(entries)}`);
      if (!entries.some((e) => /^Re-run/.test(e)))
        throw new Error(`the lost job's menu has no Re-run: ${JSON.stringify(entries)}`);
      await pointerAway();
      await screenshot('jobs-lost-menu');
      await page.keyboard.press('Escape');
      await lost.click(); // selected, so it stands out in the picture
      await pointerAway();
      await screenshot('jobs-lost');
    },
  );

  await step(
    "Jobs view: while the server is away a running job's row says so and when its watch retries; back, the status bar is reachable at the job's first read",
    async () => {
      await clearNotifications();
      fs.writeFileSync(path.join(ws, 'outage-invert.json'), JSON.stringify(invertChain(2, 'outage'), null, 2) + '\n');
      await openFromExplorer('outage-invert.json');
      const status = page.locator('.statusbar-item[id$="comfyCloud.connection"] a').first();
      const statusLabel = async () => (await status.getAttribute('aria-label').catch(() => null)) ?? '';
      await emu.holdNodes({ nodeIds: ['2'] });
      let jobId;
      try {
        await palette('Comfy Cloud: Submit Workflow');
        ({ jobId } = await emu.heldAt(undefined, 1));
        await jobRow('outage-invert.json', jobId, 'running').waitFor();
        emu.setAway(true);
        const away = jobRow('outage-invert.json', jobId, 'running');
        await until(
          async () =>
            `the row says the server is unreachable: ${await away.getAttribute('aria-label').catch(() => '')}`,
          async () =>
            /running, server unreachable, retrying in \d+ s/.test(
              (await away.getAttribute('aria-label').catch(() => '')) ?? '',
            ),
        );
        await away.locator('.codicon-debug-disconnect').first().waitFor();
        await until(
          async () => `the status bar says unreachable: ${await statusLabel()}`,
          async () => /, unreachable, 1 job running/.test(await statusLabel()),
        );
        console.log(`     away: ${await away.getAttribute('aria-label')}; status bar: ${await statusLabel()}`);
        await pointerAway();
        await screenshot('jobs-server-away');
        // The sidebar is narrow: widened for a picture of the whole row (its sash dragged), then put back.
        const sidebar = await page.locator('.part.sidebar').first().boundingBox();
        if (sidebar) {
          const edge = { x: sidebar.x + sidebar.width + 1, y: sidebar.y + sidebar.height / 2 };
          const drag = async (from, to) => {
            await page.mouse.move(from, edge.y);
            await page.mouse.down();
            await page.mouse.move(to, edge.y, { steps: 8 });
            await page.mouse.up();
          };
          await drag(edge.x, edge.x + 420);
          await pointerAway();
          await screenshot('jobs-server-away-wide');
          await drag(edge.x + 420, edge.x);
        }
        await pointerAway();
        const from = emu.requests.length;
        emu.setAway(false);
        // Back: the watch's next read answers, and that answer shows the connection reachable (no probe needed).
        await until(
          async () => `the status bar says reachable: ${await statusLabel()}`,
          async () => /, reachable, 1 job running/.test(await statusLabel()),
        );
        const sinceBack = emu.requests.slice(from).map((r) => `${r.method} ${r.url.replace(/\?.*/, '?…')}`);
        console.log(`     back: status bar ${await statusLabel()} after ${JSON.stringify(sinceBack)}`);
        const back = jobRow('outage-invert.json', jobId, 'running');
        await until(
          async () => `the row no longer says unreachable: ${await back.getAttribute('aria-label').catch(() => '')}`,
          async () =>
            !/unreachable/.test((await back.getAttribute('aria-label').catch(() => 'unreachable')) ?? 'unreachable'),
        );
        await pointerAway();
        await screenshot('jobs-server-back');
      } finally {
        emu.setAway(false);
        await emu.clearHolds();
      }
      await jobRow('outage-invert.json', jobId, 'succeeded').waitFor();
    },
  );
}
// --- end of the Jobs view, live --------------------------------------------------------------------------------------
// --- First-run guidance and connections (welcome view, status bar switch, walkthrough) -----------------------------
// One block: it points the user settings at a cloud connection without a key, then puts them back exactly as found,
// so the steps after it see the settings of the steps before.
{
  const machineSettings = path.join(userData, 'Machine', 'settings.json');
  const savedSettings = fs.existsSync(machineSettings) ? fs.readFileSync(machineSettings, 'utf8') : undefined;
  const restoreSettings = () => {
    if (savedSettings === undefined) fs.rmSync(machineSettings, { force: true });
    else fs.writeFileSync(machineSettings, savedSettings);
  };
  // A loopback port nothing listens on: the cloud connection's health probe never leaves the machine.
  const net = await import('node:net');
  const deadPort = await new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
  const connectionItem = (text) => page.locator('.statusbar-item', { hasText: text }).first();
  // The sidebar's title is "Comfy Cloud: Jobs" while it shows the container (one view: no pane header of its own).
  const jobsPaneOpen = async () => {
    const title = page.locator('.part.sidebar .composite.title', { hasText: 'Comfy Cloud' }).first();
    if (!(await title.isVisible().catch(() => false)))
      await page.locator('.activitybar .action-item a[aria-label^="Comfy Cloud"]').first().click();
    await title.waitFor();
  };
  try {
    await step(
      'the Jobs view shows the welcome when no connection is usable: Start Local Emulator and Open a Sample Workflow first, both visible in a 900-pixel-high window',
      async () => {
        await clearNotifications();
        await page.setViewportSize({ width: 1400, height: 900 });
        await writeSettings(machineSettings, {
          'comfyCloud.connections': [
            { name: 'Cloud without key', surface: 'cloud', baseUrl: `http://127.0.0.1:${deadPort}` },
          ],
          'comfyCloud.activeConnection': 'Cloud without key',
        });
        await connectionItem('Cloud without key').waitFor();
        await jobsPaneOpen();
        const welcome = page.locator('.welcome-view-content', { hasText: 'Start Local Emulator' }).first();
        await welcome.waitFor();
        for (const name of ['Add Connection', 'Set API Key', 'Start Local Emulator', 'Open a Sample Workflow']) {
          await welcome.getByRole('button', { name }).waitFor();
        }
        // The two that need no account come first, and show without scrolling: the element at each button's centre is
        // the button itself (not the pane below, not nothing: a button cut by the pane's bottom fails).
        const names = await welcome.getByRole('button').allInnerTexts();
        if (names[0] !== 'Start Local Emulator' || names[1] !== 'Open a Sample Workflow')
          throw new Error(`the welcome's buttons in order: ${JSON.stringify(names)}`);
        for (const name of ['Start Local Emulator', 'Open a Sample Workflow']) {
          const shown = await welcome.getByRole('button', { name }).evaluate((el) => {
            const r = el.getBoundingClientRect();
            const hit = el.ownerDocument.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
            return (
              r.height > 0 && r.bottom <= el.ownerDocument.defaultView.innerHeight && hit !== null && el.contains(hit)
            );
          });
          if (!shown)
            throw new Error(
              `"${name}" is not visible in a ${page.viewportSize()?.height}-pixel-high window (cut or below the fold)`,
            );
        }
        const label = await connectionItem('Cloud without key')
          .locator('a')
          .first()
          .getAttribute('aria-label')
          .catch(() => null);
        console.log(`     status bar: ${label}`);
        if (label && !/Cloud without key, .*running/.test(label))
          throw new Error(`the status bar's accessible label does not spell out connection, health and jobs: ${label}`);
        await pointerAway();
        await screenshot('welcome');
      },
    );

    await step(
      'clicking the status bar item opens its quick pick, and choosing another connection switches to it',
      async () => {
        await connectionItem('Cloud without key').click();
        const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Default' }).first();
        await row.waitFor();
        await settled(); // the quick pick's fade-in
        await screenshot('status-quickpick');
        await row.click();
        await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
        await connectionItem('Default').waitFor();
        if (await connectionItem('Cloud without key').isVisible())
          throw new Error('the status bar still shows the cloud connection');
        const active = JSON.parse(fs.readFileSync(machineSettings, 'utf8'))['comfyCloud.activeConnection'];
        if (active !== '')
          throw new Error(
            `comfyCloud.activeConnection is ${JSON.stringify(active)}, expected "" (the default connection)`,
          );
        // Away from the item, so its hover leaves the status bar readable (the item has the focus back from the quick
        // pick, which shows its hover too: Escape hides it).
        await page.keyboard.press('Escape');
        await pointerAway(700, 300);
        await screenshot('status-switch');
      },
    );
  } finally {
    restoreSettings();
  }

  await step('the walkthrough "Get Started with Comfy Cloud" opens with its steps', async () => {
    await clearNotifications();
    const walkthrough = await openWalkthrough();
    for (const title of [
      'Connect to a job server',
      'Set the API key',
      'Or try it with the local emulator',
      'Open a sample workflow',
      'Submit it and follow the job',
    ]) {
      await walkthrough.getByText(title, { exact: true }).first().waitFor();
    }
    await pointerAway();
    await screenshot('walkthrough');
    await palette('View: Close All Editors');
  });
}

// --- The job monitor: opened on submit, it shows the progress bar moving, a live preview, then the output
// thumbnail; Cancel in it ends a running job as canceled; a failing workflow shows the error with its node and "Go to
// node" selects that node's key in the file; a window reload restores it; no CSP violation in the console ------------
{
  const machineSettings = path.join(userData, 'Machine', 'settings.json');
  const cspViolations = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
  });
  /** The monitor's page: the webview's outer iframe, then its content frame (only one webview is open in these steps). */
  const monitor = () => page.frameLocator('iframe.webview.ready').last().frameLocator('iframe#active-frame');
  const monitorTab = (jobId) => page.locator('.tabs-container .tab', { hasText: jobId.slice(0, 8) }).first();
  const requestsNaming = (from, jobId, re) =>
    emu.requests
      .slice(from)
      .filter((r) => r.url.includes(`/jobs/${encodeURIComponent(jobId)}`) && re.test(`${r.method} ${r.url}`));
  let monitoredJob;

  await step(
    'monitor: Submit Workflow opens the job monitor; its progress bar moves, a live preview shows, then the output thumbnail',
    async () => {
      await clearNotifications();
      await palette('View: Close All Editors');
      // The bottom panel (Problems) away: the monitor gets the editor area's full height, as a person would arrange it.
      await palette('View: Hide Panel').catch(() => page.keyboard.press('Escape'));
      await writeSettings(machineSettings, { 'comfyCloud.openMonitorOnSubmit': true });
      await openFile('invert.json');
      // Every node holds at its start: at each one the page must show that node's progress, then it is let go. The bar
      // is looked at while the job stands still, so no sample can miss it, however fast or slow the machine.
      await emu.holdNodes({});
      const seen = [];
      try {
        await palette('Comfy Cloud: Submit Workflow');
        const first = await emu.heldAt(undefined, 0);
        const jobId = (monitoredJob = first.jobId);
        await monitorTab(jobId).waitFor();
        for (let index = 0; index < first.total; index++) {
          const held = await emu.heldAt(jobId, index);
          // The snapshot of a held node: its share of the nodes done, and the node named.
          const percent = `${Math.floor((held.index / held.total) * 100)}%`;
          await monitor()
            .locator('section.progress .percent', { hasText: new RegExp(`^\\s*${percent}\\s*$`) })
            .waitFor();
          await monitor()
            .locator('section.progress .details li', { hasText: `Node ${held.nodeId} (${held.classType})` })
            .waitFor();
          const bar = await monitor()
            .locator('section.progress vscode-progress-bar')
            .evaluate((el) => el.value);
          seen.push({ node: held.nodeId, percent, bar });
          // One signal at a time: the monitor shows the progress; no progress notification while it is visible.
          if (await toasts.locator('.notification-toast', { hasText: 'invert.json' }).first().isVisible())
            throw new Error(`a progress notification shows beside the monitor at node ${held.nodeId}`);
          if (index > 0) {
            // The nodes before it made an image: its preview shows (decoded) while the job runs.
            const preview = monitor().locator('img.preview-img');
            await until('the preview image shown and decoded', () =>
              preview.evaluate((el) => !el.hidden && el.complete && el.naturalWidth > 0),
            );
            await pointerAway();
            await screenshot(index === 1 ? 'monitor-running' : `monitor-running-${index}`);
          }
          await emu.releaseNodes(jobId);
        }
      } finally {
        await emu.clearHolds();
      }
      console.log(`     progress seen at each held node: ${JSON.stringify(seen)}`);
      for (let i = 1; i < seen.length; i++) {
        if (!(seen[i].bar > seen[i - 1].bar))
          throw new Error(`the progress bar did not move forward: ${JSON.stringify(seen)}`);
      }
      const thumb = monitor().locator('.gallery img.thumb').first();
      await thumb.waitFor();
      const [width] = await loadedImage(thumb);
      const src = await thumb.getAttribute('src');
      if (!(width > 0)) throw new Error(`the output thumbnail did not load: ${src}`);
      if (!/^https:\/\/[^/]*vscode-(resource|cdn)|^data:/.test(src))
        throw new Error(`the thumbnail is not local: ${src}`);
      await monitor()
        .locator('vscode-badge.status', { hasText: /succeeded/i })
        .waitFor();
      await monitor()
        .locator('section.progress .percent', { hasText: /^\s*100%\s*$/ })
        .waitFor();
      const ended = await toast(/succeeded/).isVisible();
      if (ended) throw new Error('the end-of-job notification showed while the monitor was visible');
      await pointerAway();
      await screenshot('monitor-succeeded');
    },
  );

  await step(
    "monitor: the README picture: a finished job's monitor with its image, the Comfy Cloud sidebar beside it",
    async () => {
      if (!monitoredJob) throw new Error('no monitored job from the first step');
      await clearNotifications();
      const title = page.locator('.part.sidebar .composite.title', { hasText: 'Comfy Cloud' }).first();
      if (!(await title.isVisible().catch(() => false)))
        await page.locator('.activitybar .action-item a[aria-label^="Comfy Cloud"]').first().click();
      await title.waitFor();
      await page.locator('.part.sidebar .monaco-list-row', { hasText: 'invert.json' }).first().waitFor();
      await monitorTab(monitoredJob).click();
      await loadedImage(monitor().locator('.gallery img.thumb').first());
      await pointerAway();
      await screenshot('readme-hero');
    },
  );

  await step('monitor: Cancel in the monitor ends a running job as canceled (POST …/cancel)', async () => {
    await clearNotifications();
    await palette('View: Close All Editors');
    fs.writeFileSync(
      path.join(ws, 'monitor-held.json'),
      JSON.stringify(invertChain(2, 'monitor-held'), null, 2) + '\n',
    );
    await openFile('monitor-held.json');
    const from = emu.requests.length;
    // Held at its second node: running, with a preview, when Cancel is pressed.
    await emu.holdNodes({ classTypes: ['ImageInvert'] });
    let jobId;
    try {
      await palette('Comfy Cloud: Submit Workflow');
      ({ jobId } = await emu.heldAt(undefined, 1));
      await monitorTab(jobId).waitFor();
      await monitor()
        .locator('vscode-badge.status', { hasText: /running/i })
        .waitFor();
      const cancel = monitor().locator('.actions vscode-button', { hasText: 'Cancel' }).first();
      await cancel.waitFor();
      await cancel.click();
      await monitor()
        .locator('vscode-badge.status', { hasText: /canceled/i })
        .waitFor();
    } finally {
      await emu.clearHolds();
    }
    const sent = requestsNaming(from, jobId, /^POST .*\/cancel/);
    if (sent.length !== 1) throw new Error(`expected one POST …/cancel, saw ${sent.length}`);
    await pointerAway();
    await screenshot('monitor-canceled');
  });

  await step(
    'monitor: a failing workflow shows the error with its node; "Go to node" selects that node in the file',
    async () => {
      await clearNotifications();
      await palette('View: Close All Editors');
      // Node 3 asks for more pixels than the emulator allows in a batch: it fails when it runs (node_execution_error).
      const failing = {
        3: { class_type: 'EmptyImage', inputs: { width: 16384, height: 16384, batch_size: 64, color: 0 } },
        4: { class_type: 'ImageInvert', inputs: { image: ['3', 0] } },
        5: { class_type: 'SaveImage', inputs: { images: ['4', 0], filename_prefix: 'monitor-fail' } },
      };
      fs.writeFileSync(path.join(ws, 'monitor-fail.json'), JSON.stringify(failing, null, 2) + '\n');
      await openFile('monitor-fail.json');
      const from = emu.requests.length;
      await palette('Comfy Cloud: Submit Workflow');
      const jobId = await submittedJobId(from);
      await monitorTab(jobId).waitFor();
      const error = monitor().locator('section.error');
      await error.locator('.error-code').filter({ hasText: /\S/ }).waitFor();
      const words = (await error.innerText()).replace(/\s+/g, ' ');
      console.log(`     error: ${words.slice(0, 200)}`);
      if (!/\b3\b/.test(words) || !/EmptyImage/.test(words))
        throw new Error(`the error does not name node 3 (EmptyImage): ${words}`);
      await pointerAway();
      await screenshot('monitor-error');
      await error.locator('.error-node vscode-button').first().click();
      await page.locator('.tabs-container .tab.active[data-resource-name="monitor-fail.json"]').waitFor();
      // The selection is the node's key, `"3"` (3 characters with its quotes): the status bar says so.
      await page
        .locator('.statusbar-item', { hasText: /Ln 2, Col \d+ \(3 selected\)/ })
        .first()
        .waitFor();
      await screenshot('monitor-go-to-node');
    },
  );

  /** The monitor's Graph section, scrolled into view, and its node of id `id` (its accessible name ends with `, id`). */
  const graphSection = () => monitor().locator('section.graph');
  const graphNode = (id) => graphSection().locator('g.graph-node[data-id="' + id + '"]');
  const nodeStates = () =>
    graphSection()
      .locator('g.graph-node')
      .evaluateAll((gs) =>
        Object.fromEntries(
          gs.map((g) => [
            g.getAttribute('data-id'),
            (/\bstate-(\w+)/.exec(g.getAttribute('class') ?? '') ?? [])[1] ?? 'none',
          ]),
        ),
      );

  await step(
    "monitor graph: a held job's nodes change state: node 1 done, node 2 running, node 3 waiting, then all done",
    async () => {
      await clearNotifications();
      await palette('View: Close All Editors');
      await writeSettings(machineSettings, { 'comfyCloud.openMonitorOnSubmit': true });
      await openFile('invert.json');
      await emu.holdNodes({ nodeIds: ['2'] });
      try {
        await palette('Comfy Cloud: Submit Workflow');
        const held = await emu.heldAt(undefined, 1);
        await monitorTab(held.jobId).waitFor();
        await graphSection().locator('g.graph-node.state-running[data-id="2"]').waitFor();
        await graphSection().scrollIntoViewIfNeeded();
        const running = await nodeStates();
        console.log(`     held at node 2: ${JSON.stringify(running)}`);
        if (JSON.stringify(running) !== JSON.stringify({ 1: 'done', 2: 'running', 3: 'waiting' }))
          throw new Error(`the graph shows ${JSON.stringify(running)} while node 2 is held`);
        await pointerAway();
        await screenshot('monitor-graph-running');
        await emu.releaseNodes(held.jobId);
      } finally {
        await emu.clearHolds();
      }
      await monitor()
        .locator('vscode-badge.status', { hasText: /succeeded/i })
        .waitFor();
      await until('every node done in the graph', async () => {
        const st = await nodeStates();
        return Object.values(st).length === 3 && Object.values(st).every((x) => x === 'done') ? st : undefined;
      });
      await graphSection().scrollIntoViewIfNeeded();
      await pointerAway();
      await screenshot('monitor-graph-done');
      await palette('View: Close All Editors');
    },
  );

  await step(
    "monitor graph: a failed node shows its error; clicking it (Go to node) selects the node's JSON in the file",
    async () => {
      await clearNotifications();
      await palette('View: Close All Editors');
      const failing = {
        3: { class_type: 'EmptyImage', inputs: { width: 16384, height: 16384, batch_size: 64, color: 0 } },
        4: { class_type: 'ImageInvert', inputs: { image: ['3', 0] } },
        5: { class_type: 'SaveImage', inputs: { images: ['4', 0], filename_prefix: 'monitor-graph-fail' } },
      };
      fs.writeFileSync(path.join(ws, 'monitor-graph-fail.json'), JSON.stringify(failing, null, 2) + '\n');
      await writeSettings(machineSettings, { 'comfyCloud.openMonitorOnSubmit': true });
      await openFile('monitor-graph-fail.json');
      const from = emu.requests.length;
      await palette('Comfy Cloud: Submit Workflow');
      const jobId = await submittedJobId(from);
      await monitorTab(jobId).waitFor();
      const failed = graphNode('3');
      await graphSection().locator('g.graph-node.state-failed[data-id="3"]').waitFor();
      const label = await failed.getAttribute('aria-label');
      if (!/failed/.test(label ?? '')) throw new Error(`the failed node's name does not say failed: ${label}`);
      const error = await graphSection().locator('.graph-node-error').first().textContent();
      if (!/✗/.test(error ?? '')) throw new Error(`no error under the failed node: ${error}`);
      await graphSection().scrollIntoViewIfNeeded();
      await pointerAway();
      await screenshot('monitor-graph-failed');
      await failed.locator('rect').first().click();
      await page.locator('.tabs-container .tab.active[data-resource-name="monitor-graph-fail.json"]').waitFor();
      // The selection is the node's key, `"3"` (3 characters with its quotes): the status bar says so.
      await page
        .locator('.statusbar-item', { hasText: /Ln 2, Col \d+ \(3 selected\)/ })
        .first()
        .waitFor();
      await screenshot('monitor-graph-go-to-node');
      await palette('View: Close All Editors');
    },
  );

  await step(
    'monitor graph: a job that fails at its fourth node keeps nodes 1-3 done and marks node 4 failed',
    async () => {
      await clearNotifications();
      await palette('View: Close All Editors');
      // Node 4 scales to more pixels than the emulator allows in a batch: it fails when it runs, after 1-3 ran.
      const chain = {
        1: { class_type: 'EmptyImage', inputs: { width: 64, height: 64, batch_size: 1, color: 0 } },
        2: { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
        3: { class_type: 'ImageInvert', inputs: { image: ['2', 0] } },
        4: {
          class_type: 'ImageScale',
          inputs: { image: ['3', 0], upscale_method: 'nearest-exact', width: 16384, height: 16384, crop: 'disabled' },
        },
        5: { class_type: 'SaveImage', inputs: { images: ['4', 0], filename_prefix: 'monitor-chain-fail' } },
      };
      fs.writeFileSync(path.join(ws, 'monitor-chain-fail.json'), JSON.stringify(chain, null, 2) + '\n');
      await writeSettings(machineSettings, { 'comfyCloud.openMonitorOnSubmit': true });
      await openFile('monitor-chain-fail.json');
      await emu.holdNodes({ nodeIds: ['4'] });
      try {
        await palette('Comfy Cloud: Submit Workflow');
        const held = await emu.heldAt(undefined, 3);
        await monitorTab(held.jobId).waitFor();
        await graphSection().locator('g.graph-node.state-running[data-id="4"]').waitFor();
        const running = await nodeStates();
        console.log(`     held at node 4: ${JSON.stringify(running)}`);
        if (JSON.stringify(running) !== JSON.stringify({ 1: 'done', 2: 'done', 3: 'done', 4: 'running', 5: 'waiting' }))
          throw new Error(`the graph shows ${JSON.stringify(running)} while node 4 runs`);
        await graphSection().scrollIntoViewIfNeeded();
        await pointerAway();
        await screenshot('monitor-graph-chain-running');
      } finally {
        await emu.clearHolds();
      }
      await graphSection().locator('g.graph-node.state-failed[data-id="4"]').waitFor();
      const failed = await nodeStates();
      console.log(`     failed: ${JSON.stringify(failed)}`);
      if (JSON.stringify(failed) !== JSON.stringify({ 1: 'done', 2: 'done', 3: 'done', 4: 'failed', 5: 'none' }))
        throw new Error(`after the failure the graph shows ${JSON.stringify(failed)}`);
      await graphSection().scrollIntoViewIfNeeded();
      await pointerAway();
      await screenshot('monitor-graph-chain-failed');
      await palette('View: Close All Editors');
    },
  );

  await step('monitor: a window reload restores the monitor, which reads the job again', async () => {
    await palette('View: Close All Editors');
    if (!monitoredJob) throw new Error('no monitored job from the first step');
    // The command asks for the job id in the same quick input the palette used.
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill('>Comfy Cloud: Open Job Monitor');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Open Job Monitor' }).first().waitFor();
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-widget', { hasText: 'The id of the job to monitor' }).waitFor();
    await input.fill(monitoredJob);
    await page.keyboard.press('Enter');
    await monitorTab(monitoredJob).waitFor();
    await monitor()
      .locator('vscode-badge.status', { hasText: /succeeded/i })
      .waitFor();
    const from = emu.requests.length;
    await palette('Developer: Reload Window');
    await page.locator('.monaco-workbench').waitFor({ timeout: 90000 });
    await monitorTab(monitoredJob).waitFor();
    await monitor()
      .locator('vscode-badge.status', { hasText: /succeeded/i })
      .waitFor();
    await monitor().locator('.gallery img.thumb').first().waitFor();
    const reread = requestsNaming(from, monitoredJob, /^GET /);
    if (reread.length === 0) throw new Error('the restored monitor did not read the job again');
    await pointerAway();
    await screenshot('monitor-restored');
  });

  await step(
    'monitor: keyboard: Tab moves through its buttons; Enter on "Open Workflow" opens the workflow file',
    async () => {
      if (!monitoredJob) throw new Error('no monitored job from the first step');
      await monitorTab(monitoredJob).waitFor();
      await monitor().locator('h1.name').click();
      const reached = [];
      for (let i = 0; i < 12 && reached.at(-1) !== 'Open Workflow'; i++) {
        await page.keyboard.press('Tab');
        // The page's focused element after the key: a button's label, or null for anything else.
        const label = await monitor()
          .locator('body')
          .evaluate((b) => {
            const focused = b.ownerDocument.activeElement;
            return focused?.tagName === 'VSCODE-BUTTON' ? focused.textContent.trim() : null;
          });
        if (label) reached.push(label);
      }
      console.log(`     Tab reached: ${JSON.stringify(reached)}`);
      if (reached.at(-1) !== 'Open Workflow')
        throw new Error(`Tab did not reach "Open Workflow": ${JSON.stringify(reached)}`);
      await page.keyboard.press('Enter');
      // The workflow file opens in a text editor (the monitor's tab stays in its group, behind it).
      await editor().locator('.view-lines', { hasText: 'Red canvas' }).waitFor();
      await pointerAway();
      await screenshot('monitor-keyboard-open-workflow');
      await monitorTab(monitoredJob).click();
      await monitor()
        .locator('vscode-badge.status', { hasText: /succeeded/i })
        .waitFor();
    },
  );

  await step(
    "monitor: it follows the color theme (dark, high contrast) through the theme's CSS variables",
    async () => {
      if (!monitoredJob) throw new Error('no monitored job from the first step');
      await monitorTab(monitoredJob).waitFor();
      /** The page's background and text colors, and the status badge's: what the theme decides. */
      const colors = () =>
        monitor()
          .locator('body')
          .evaluate((b) => {
            // Runs in the page: its window and document are the body's.
            const view = b.ownerDocument.defaultView;
            const s = view.getComputedStyle(b);
            const badge = b.ownerDocument.querySelector('vscode-badge.status');
            return `${s.backgroundColor} / ${s.color} / ${badge ? view.getComputedStyle(badge).backgroundColor : '-'}`;
          });
      /** Resolves once the colors differ from every one in `not` (sampling the page: no event reaches the test). */
      const colorsOtherThan = (not, what) =>
        until(
          async () => `the monitor's colors did not follow ${what}: still ${await colors().catch(() => null)}`,
          async () => {
            const now = await colors().catch(() => null);
            return now && !not.includes(now) ? now : undefined;
          },
        );
      const first = await colors();
      console.log(`     first theme: ${first}`);
      const seen = [first];
      let original = '';
      try {
        for (const [theme, name] of [
          ['Dark Modern', 'monitor-dark'],
          ['Dark High Contrast', 'monitor-high-contrast'],
        ]) {
          const was = await pickColorTheme(theme);
          original ||= was;
          const now = await colorsOtherThan(seen, theme);
          console.log(`     ${theme}: ${now}`);
          seen.push(now);
          await pointerAway();
          await screenshot(name);
        }
      } finally {
        // Back to the theme of the other steps.
        console.log(`     back to: ${original}`);
        if (original) await pickColorTheme(original).catch(() => {});
      }
      await until(
        async () => `the monitor did not return to the first theme: ${await colors().catch(() => null)}`,
        async () => (await colors().catch(() => null)) === first,
      );
    },
  );

  /** The job's output folder in the workspace, and the files in it (partial downloads, dot-files, left out). */
  const outputsOf = (jobId) => {
    const dir = path.join(ws, '.comfy', 'outputs', jobId);
    return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => !f.startsWith('.')) : [];
  };
  /** Waits until the monitor shows the job succeeded with its output as a thumbnail loaded from the downloaded file. */
  const succeededWithThumbnail = async () => {
    await monitor()
      .locator('vscode-badge.status', { hasText: /succeeded/i })
      .waitFor();
    const thumb = monitor().locator('.gallery img.thumb').first();
    await thumb.waitFor();
    const [width] = await loadedImage(thumb);
    const src = await thumb.getAttribute('src');
    if (!(width > 0)) throw new Error(`the output thumbnail did not load: ${src}`);
    if (!/^https:\/\/[^/]*vscode-(resource|cdn)/.test(src))
      throw new Error(`the thumbnail is not the downloaded file: ${src}`);
    return src;
  };

  await step(
    'monitor: after a window reload, a running job\'s monitor shows the server\'s status at once, never the remembered "queued"',
    async () => {
      await clearNotifications();
      await palette('View: Close All Editors');
      await writeSettings(machineSettings, { 'comfyCloud.openMonitorOnSubmit': true });
      fs.writeFileSync(
        path.join(ws, 'reload-held.json'),
        JSON.stringify(invertChain(2, 'reload-held'), null, 2) + '\n',
      );
      await openFile('reload-held.json');
      // Held at its second node: running through the reload, however long the reload takes.
      await emu.holdNodes({ classTypes: ['ImageInvert'] });
      try {
        await palette('Comfy Cloud: Submit Workflow');
        const { jobId } = await emu.heldAt(undefined, 1);
        await monitorTab(jobId).waitFor();
        await monitor()
          .locator('vscode-badge.status', { hasText: /running/i })
          .waitFor();
        await palette('Developer: Reload Window');
        await page.locator('.monaco-workbench').waitFor({ timeout: 90000 });
        await monitorTab(jobId).waitFor();
        const t0 = Date.now();
        // Every status the restored page shows, in order, until it shows the server's "running".
        const seen = [];
        await until(
          () => `the restored monitor showing running (seen: ${JSON.stringify(seen)})`,
          async () => {
            const text = (
              await monitor()
                .locator('vscode-badge.status')
                .innerText({ timeout: 1000 })
                .catch(() => '')
            ).trim();
            if (text && seen.at(-1)?.shown !== text) seen.push({ shown: text, ms: Date.now() - t0 });
            return /running/i.test(text);
          },
        );
        console.log(`     statuses the restored monitor showed: ${JSON.stringify(seen)}`);
        if (seen.some((s) => /queued/i.test(s.shown)))
          throw new Error(
            `the restored monitor showed the remembered status before the server's: ${JSON.stringify(seen)}`,
          );
        await pointerAway();
        await screenshot('monitor-running-after-reload');
      } finally {
        await emu.clearHolds();
      }
    },
  );

  await step(
    'reload: a job that ends during "Developer: Reload Window" shows succeeded with its thumbnail after it, its output in its folder',
    async () => {
      await clearNotifications();
      await palette('View: Close All Editors');
      await writeSettings(machineSettings, { 'comfyCloud.openMonitorOnSubmit': true });
      fs.writeFileSync(
        path.join(ws, 'reload-held.json'),
        JSON.stringify(invertChain(1, 'reload-held', 255 * 256), null, 2) + '\n',
      );
      await openFile('reload-held.json');
      await emu.holdNodes({});
      let jobId;
      try {
        await palette('Comfy Cloud: Submit Workflow');
        ({ jobId } = await emu.heldAt(undefined, 0));
        await monitorTab(jobId).waitFor();
        await monitor()
          .locator('vscode-badge.status', { hasText: /running/i })
          .waitFor();
        // The reload, and the hold released once the old window is gone: the job ends while no extension host watches it.
        const navigated = page.waitForEvent('framenavigated', (f) => f === page.mainFrame());
        await palette('Developer: Reload Window');
        await navigated;
      } finally {
        await emu.clearHolds();
      }
      await page.locator('.monaco-workbench').waitFor({ timeout: 90000 });
      await monitorTab(jobId).waitFor();
      await monitorTab(jobId).click();
      await succeededWithThumbnail();
      const files = await until(
        () => `no output in .comfy/outputs/${jobId}: ${JSON.stringify(outputsOf(jobId))}`,
        () => (outputsOf(jobId).length > 0 ? outputsOf(jobId) : undefined),
      );
      if (files.length !== 1) throw new Error(`not exactly one output file: ${JSON.stringify(files)}`);
      // The Jobs view beside it says the same.
      await page.locator('.activitybar .action-item a[aria-label^="Comfy Cloud"]').first().click();
      await page
        .locator('.part.sidebar .monaco-list-row', { hasText: jobId.slice(0, 8) })
        .first()
        .waitFor();
      await pointerAway();
      await screenshot('reload-job-ended-with-thumbnail');
    },
  );

  await step(
    'first job from the walkthrough: Open a Sample Workflow, then ▶ on the untitled editor; the monitor shows the image thumbnail',
    async () => {
      try {
        await clearNotifications();
        await palette('View: Close All Editors');
        await writeSettings(machineSettings, { 'comfyCloud.openMonitorOnSubmit': true });
        const walkthrough = await openWalkthrough();
        await walkthrough.getByText('Open a sample workflow', { exact: true }).first().click();
        // The step's button (the command link of its description, rendered as a monaco button; the step's own header is a
        // button whose accessible name holds the same words, so the role alone does not tell them apart).
        const open = walkthrough.locator('a.monaco-button', { hasText: 'Open a Sample Workflow' }).first();
        await open.waitFor();
        await open.click();
        // The sample opens as an untitled editor.
        await page.locator('.tabs-container .tab.active', { hasText: /Untitled/ }).waitFor();
        const from = emu.requests.length;
        const play = page.locator('.editor-actions .action-item a[aria-label*="Submit Workflow"]').first();
        await play.waitFor();
        await play.click();
        const jobId = await submittedJobId(from);
        await monitorTab(jobId).waitFor();
        await succeededWithThumbnail();
        const files = await until(
          () => `no output in .comfy/outputs/${jobId}`,
          () => (outputsOf(jobId).length > 0 ? outputsOf(jobId) : undefined),
        );
        if (files.length !== 1)
          throw new Error(`not exactly one output file in the workspace's folder: ${JSON.stringify(files)}`);
        await pointerAway();
        await screenshot('walkthrough-first-job');
      } finally {
        // The untitled sample is closed unsaved (its close button, then "Don't Save"), whatever happened above, so no
        // "save changes?" dialog blocks the steps after this one.
        const untitled = page.locator('.tabs-container .tab', { hasText: /Untitled/ }).first();
        if ((await untitled.count()) > 0) {
          await untitled.hover();
          await untitled.locator('.tab-actions .action-label').first().click();
          await page.getByRole('button', { name: "Don't Save" }).click();
          await untitled.waitFor({ state: 'detached' });
        }
      }
    },
  );

  await step('monitor: no Content Security Policy violation appeared in the console', async () => {
    await writeSettings(machineSettings, { 'comfyCloud.openMonitorOnSubmit': false });
    if (cspViolations.length) throw new Error(`CSP violations: ${JSON.stringify(cspViolations.slice(0, 3))}`);
  });
}
// --- end of the job monitor ----------------------------------------------------------------------------------------

// --- The model router: "Set Router Key" asks for the key; the Models view lists providers and models;
// "New Model Input" opens a prefilled input whose schema completes fields and flags a bad value; Run Model opens the
// native output; a 422 lands in Problems on the field's line ---------------------------------------------------------
{
  const machineSettings = path.join(userData, 'Machine', 'settings.json');
  const routerRequests = (from) => emu.requests.slice(from).filter((r) => r.url.startsWith('/router/'));
  /** Runs a palette command that asks through an input box, then answers it with `value`. */
  async function paletteWithInput(command, prompt, value) {
    await paletteAsking(command, prompt);
    const input = page.locator('.quick-input-widget input');
    await input.fill(value);
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
  }
  /** The Models view's row whose label is exactly `label` (a provider or a model). */
  const modelRow = (label) =>
    page
      .locator('.pane-body .monaco-list-row')
      .filter({
        has: page.locator('.label-name', {
          hasText: new RegExp(`^\\s*${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`),
        }),
      })
      .first();
  /** "New Model Input" from the context menu of the model `id` in the Models view. */
  async function newModelInput(id) {
    const [provider, model] = id.split('/');
    await palette('Comfy Cloud: Focus on Models View');
    const providerRow = modelRow(provider);
    await providerRow.waitFor();
    if ((await providerRow.getAttribute('aria-expanded')) !== 'true') await providerRow.click();
    const row = modelRow(model);
    await row.waitFor();
    await row.click({ button: 'right' });
    const item = page.locator('.monaco-menu .action-item', { hasText: 'New Model Input' }).first();
    await item.waitFor();
    await chooseMenuEntry(item);
    await page.locator('.tabs-container .tab.active', { hasText: /Untitled/ }).waitFor();
    await editor()
      .locator('.view-lines', { hasText: `comfy-router-schema:/${id}.json` })
      .waitFor();
    return row;
  }

  await step(
    'Models view: "Set Router Key" takes the key, then the view lists the catalog\'s providers and a provider\'s models',
    async () => {
      await clearNotifications();
      await palette('View: Close All Editors');
      await writeSettings(machineSettings, { 'comfyCloud.routerUrl': emu.routerUrl });
      await palette('Comfy Cloud: Focus on Models View');
      await page.locator('.welcome-view-content', { hasText: 'No model router is connected' }).waitFor();
      // Jobs and Assets collapsed: the Models view gets the sidebar's height.
      await onlyViews('Models');
      const from = emu.requests.length;
      await paletteWithInput('Comfy Cloud: Set Router Key', 'Model Router Key', 'test-router-key');
      const provider = modelRow('emulator');
      await provider.waitFor();
      if ((await provider.getAttribute('aria-expanded')) !== 'true') await provider.click();
      await modelRow('strict').waitFor();
      const pages = routerRequests(from).filter((r) => /^\/router\/v1\/models(\?|$)/.test(r.url));
      console.log(
        `     catalog requests: ${pages.length} (${pages
          .map((r) => r.url.replace(/^\/router\/v1\/models/, ''))
          .slice(0, 4)
          .join(' ')} …)`,
      );
      if (pages.length < 2) throw new Error(`the catalog was not paged: ${JSON.stringify(pages)}`);
      const providers = await page.locator('.pane-body .monaco-list-row', { hasText: /\d+ models?\s*$/ }).count();
      if (providers < 2) throw new Error(`only ${providers} provider(s) listed`);
      // Its tooltip in the picture too, when the hover shows in time (for the picture only).
      await modelRow('strict').hover();
      await page
        .locator('.monaco-hover, .custom-hover, .workbench-hover')
        .first()
        .waitFor({ timeout: 10000 })
        .catch(() => {});
      await settled();
      await screenshot('models-view');
      await pointerAway(700, 300);
    },
  );

  await step(
    "New Model Input on emulator/strict: a prefilled input; completion offers the schema's fields; an out-of-range value gets a squiggle",
    async () => {
      await newModelInput('emulator/strict');
      const text = await editor().locator('.view-lines').innerText();
      if (!/"steps":\s*20/.test(text)) throw new Error(`the input is not prefilled with steps' default: ${text}`);
      // "steps" is the last field of the prefill: make it 500 (the schema allows 1 to 50).
      const lines = text.split('\n');
      const stepsLine = lines.findIndex((l) => /"steps"/.test(l)) + 1;
      await gotoLineEnd(stepsLine);
      await page.keyboard.press('Backspace');
      await page.keyboard.press('Backspace');
      await page.keyboard.type('500');
      await editor().locator('.squiggly-warning, .squiggly-error').first().waitFor();
      // A new field after it: completion lists the schema's other fields.
      await page.keyboard.type(',');
      await page.keyboard.press('Enter');
      const labels = await suggestions('sampler');
      console.log(`     completion: ${JSON.stringify(labels)}`);
      for (const field of ['negative_prompt', 'guidance', 'sampler', 'seed']) {
        if (!labels.some((l) => l.includes(field)))
          throw new Error(`completion does not offer ${field}: ${JSON.stringify(labels)}`);
      }
      await screenshot('model-input-completion');
      // Accept "sampler" (filtered by typing, as a person would): the service inserts it with its default, so the
      // input is valid JSON again, with steps still 500.
      await acceptSuggestion('samp', 'sampler');
      // The service then offers the field's values (its enum): the focused one is taken.
      await suggest.locator('.monaco-list-row', { hasText: 'euler_a' }).waitFor();
      await page.keyboard.press('Enter');
      await page.keyboard.press('Escape');
      await editor()
        .locator('.view-lines', { hasText: /"sampler":\s"\w+"/ })
        .waitFor();
      // (The rendered lines' DOM order need not be the text's: checked line by line, not parsed.)
      const after = (await editor().locator('.view-lines').innerText()).replace(/\u00a0/g, ' ');
      if (!/"steps": 500,/.test(after) || !/"sampler": "\w+"\s*$/m.test(after))
        throw new Error(`unexpected input after accepting the completion: ${after}`);
    },
  );

  await step(
    'Run Model on that input: the 422 lands in Problems at the "steps" line, with the request id in the message',
    async () => {
      await clearNotifications();
      const from = emu.requests.length;
      await page.locator('.editor-actions .action-label[aria-label^="Run Model"]').first().click();
      const failed = toast(/refused the input/);
      await failed.waitFor();
      const said = await failed.innerText();
      if (!/request /.test(said)) throw new Error(`the message does not name the request id: ${said}`);
      const posts = routerRequests(from).filter((r) => r.method === 'POST');
      if (posts.length !== 1) throw new Error(`expected one POST to the router, saw ${JSON.stringify(posts)}`);
      await palette('View: Focus Problems');
      const row = page
        .locator('.markers-panel .monaco-list-row', { hasText: /Comfy Cloud/ })
        .filter({ hasText: /steps/ })
        .first();
      await row.waitFor();
      const text = (await row.innerText()).replace(/\s+/g, ' ');
      console.log(`     Problems: ${text}`);
      const stepsLine =
        (await editor().locator('.view-lines').innerText()).split('\n').findIndex((l) => /"steps"/.test(l)) + 1;
      if (!new RegExp(`\\[Ln ${stepsLine}, Col \\d+\\]`).test(text))
        throw new Error(`the entry is not on line ${stepsLine}: ${text}`);
      await pointerAway(600, 300);
      await screenshot('model-422-problems');
      await palette('View: Hide Panel').catch(() => page.keyboard.press('Escape'));
    },
  );

  await step(
    'Run Model on emulator/echo (editor title button): the native output opens as JSON beside the input',
    async () => {
      await clearNotifications();
      // The strict input is an untitled document with changes: closed without saving (no dialog).
      await palette('View: Revert and Close Editor');
      await palette('View: Close All Editors');
      await newModelInput('emulator/echo');
      // A field after $schema, typed as a person would (the editor closes the quotes as they are typed).
      await gotoLineEnd(2);
      await page.keyboard.type(',');
      await page.keyboard.press('Enter');
      await page.keyboard.type('"prompt": "a red fox"');
      await editor().locator('.view-lines', { hasText: '"prompt": "a red fox"' }).waitFor();
      const from = emu.requests.length;
      await page.locator('.editor-actions .action-label[aria-label^="Run Model"]').first().click();
      // The output opens beside the input, in a second editor group: echo answers the input without its $schema.
      const output = page.locator('.editor-group-container').nth(1).locator('.view-lines');
      await output.filter({ hasText: 'a red fox' }).first().waitFor();
      if (/comfy-router-schema/.test(await output.first().innerText())) throw new Error('the $schema key was sent');
      await toast(/Running emulator\/echo/).waitFor({ state: 'hidden' });
      const posts = routerRequests(from).filter((r) => r.method === 'POST');
      console.log(`     ${posts.map((r) => `${r.method} ${r.url} → ${r.status}`).join(', ')}`);
      if (posts.length !== 1 || posts[0].status !== 200)
        throw new Error(`expected one POST answered 200: ${JSON.stringify(posts)}`);
      await pointerAway();
      await screenshot('model-output');
    },
  );

  await step(
    'a model input open when the window loads still validates: the comfy-router-schema scheme activates the extension',
    async () => {
      // The two untitled editors (input and output) closed without saving, so the reload restores only the file.
      for (let i = 0; i < 2; i++)
        await palette('View: Revert and Close Editor').catch(() => page.keyboard.press('Escape'));
      await palette('View: Close All Editors');
      const name = 'model-input.json';
      fs.writeFileSync(
        path.join(ws, name),
        '{\n  "$schema": "comfy-router-schema:/emulator/strict.json",\n  "prompt": "a cat",\n  "steps": 500\n}\n',
      );
      await openFile(name);
      // The Explorer shows, not the Comfy Cloud sidebar: after the reload nothing but the schema's scheme activates it.
      await palette('Developer: Reload Window');
      await page.locator('.monaco-workbench').waitFor({ timeout: 90000 });
      await page.locator('.tabs-container .tab.active', { hasText: name }).waitFor();
      await palette('View: Focus Problems');
      const row = page
        .locator('.markers-panel .monaco-list-row', { hasText: 'Value is above the maximum of 50' })
        .first();
      await row.waitFor();
      const unresolved = await page
        .locator('.markers-panel .monaco-list-row', { hasText: /Unable to load schema|can not be resolved/i })
        .count();
      if (unresolved) throw new Error("the JSON language service could not load the model's schema");
      console.log(`     Problems: ${(await row.innerText()).replace(/\s+/g, ' ')}`);
      await pointerAway(600, 300);
      await screenshot('model-input-after-reload');
      await palette('View: Hide Panel').catch(() => page.keyboard.press('Escape'));
    },
  );
}
// --- end of the model router ---------------------------------------------------------------------------------------

// --- workflow IntelliSense: "Refresh Node Definitions" fetches the engine's node definitions; in a
// *.api.json file completion offers the classes (with their display names) at "class_type" and a combo input's
// choices; a link-type mismatch is in Problems with source Comfy Cloud, on its line ---------------------------------
{
  const name = 'flow.api.json';
  // Line 4: node 2's empty class_type; line 7: its empty combo "crop"; line 12: an IMAGE output linked into an INT.
  const FLOW = `{
  "1": { "class_type": "EmptyImage", "inputs": { "width": 64, "height": 64, "batch_size": 1, "color": 0 } },
  "2": {
    "class_type": "",
    "inputs": {
      "image": ["1", 0], "width": 32, "height": 32, "upscale_method": "nearest-exact",
      "crop": ""
    }
  },
  "3": { "class_type": "SaveImage", "inputs": { "images": ["2", 0], "filename_prefix": "flow" } },
  "4": { "class_type": "ImageInvert", "inputs": { "image": ["1", 0] } },
  "5": { "class_type": "EmptyImage", "inputs": { "width": ["4", 0], "height": 64, "batch_size": 1, "color": 0 } }
}
`;

  await step(
    'workflow IntelliSense: "Refresh Node Definitions", then completion at "class_type" in a *.api.json lists the engine\'s classes',
    async () => {
      await clearNotifications();
      await palette('View: Close All Editors');
      fs.writeFileSync(path.join(ws, name), FLOW);
      const from = emu.requests.length;
      await palette('Comfy Cloud: Refresh Node Definitions');
      await openFile(name);
      await gotoLineEnd(4, 2);
      // The classes are offered only once the definitions are known: then the command has fetched them.
      const labels = await suggestions('EmptyImage');
      if (!emu.requests.slice(from).some((r) => r.method === 'GET' && /\/api\/object_info$/.test(r.url.split('?')[0])))
        throw new Error('no GET /api/object_info reached the emulator');
      console.log(`     completion: ${JSON.stringify(labels)}`);
      for (const c of ['EmptyImage', 'ImageScale', 'SaveImage', 'LoadImage']) {
        if (!labels.some((l) => l.includes(c)))
          throw new Error(`completion does not offer ${c}: ${JSON.stringify(labels)}`);
      }
      // ImageScale focused: its details give the display name and category, the description and the outputs.
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('ArrowDown');
      await suggest.locator('.monaco-list-row.focused', { hasText: 'ImageScale' }).waitFor();
      const details = page.locator('.suggest-details', { hasText: 'Upscale Image' }).first();
      // Control+Space toggles the details: pressed only when the widget says they are off (their text may come later).
      if (!(await suggest.evaluate((el) => el.classList.contains('shows-details'))))
        await page.keyboard.press('Control+Space');
      await details.waitFor();
      console.log(`     details: ${(await details.innerText()).replace(/\s+/g, ' ').slice(0, 200)}`);
      await screenshot('workflow-class-type-completion');
      // Take ImageScale (filtered by typing, as a person would).
      await acceptSuggestion('ImageSc', 'ImageScale');
      await editor().locator('.view-lines', { hasText: '"class_type": "ImageScale"' }).waitFor();
    },
  );

  await step('workflow IntelliSense: completion in ImageScale\'s combo input "crop" offers its choices', async () => {
    await gotoLineEnd(7, 1);
    const labels = await suggestions('disabled');
    console.log(`     completion: ${JSON.stringify(labels)}`);
    if (!labels.some((l) => l.includes('center')))
      throw new Error(`completion does not offer center: ${JSON.stringify(labels)}`);
    if (labels.some((l) => l.includes('EmptyImage')))
      throw new Error(`node classes offered as a crop value: ${JSON.stringify(labels)}`);
    await screenshot('workflow-enum-completion');
    await acceptSuggestion('cent', 'center');
    await editor().locator('.view-lines', { hasText: '"crop": "center"' }).waitFor();
  });

  await step(
    'workflow IntelliSense: a link from an IMAGE output into an INT input is in Problems, source Comfy Cloud, on its line',
    async () => {
      await palette('View: Focus Problems');
      const row = page
        .locator('.markers-panel .monaco-list-row', { hasText: /Comfy Cloud/ })
        .filter({ hasText: /IMAGE/ })
        .first();
      await row.waitFor();
      const text = (await row.innerText()).replace(/\s+/g, ' ');
      console.log(`     Problems: ${text}`);
      if (!/INT/.test(text)) throw new Error(`the entry does not name the input's type: ${text}`);
      if (!/\[Ln 12, Col \d+\]/.test(text)) throw new Error(`the entry is not on line 12: ${text}`);
      // Node 2 is complete now (ImageScale, crop "center"): the mismatch is the file's one Comfy Cloud entry.
      const all = (
        await page.locator('.markers-panel .monaco-list-row', { hasText: /Comfy Cloud/ }).allInnerTexts()
      ).map((r) => r.replace(/\s+/g, ' '));
      if (all.length !== 1) throw new Error(`expected one Comfy Cloud entry: ${JSON.stringify(all)}`);
      await pointerAway(600, 300);
      await screenshot('workflow-link-type-problem');
      await palette('View: Hide Panel').catch(() => page.keyboard.press('Escape'));
    },
  );
}
// --- end of workflow IntelliSense ----------------------------------------------------------------------------------

// --- UI-format workflows and ComfyUI images: the CodeLens "Convert to API Format" on a UI-format file opens the API
// graph beside it; Submit Workflow on it offers "Convert and Submit", which ends in a succeeded monitor; "Open
// Workflow from Image" on that job's output opens the graph that made it; "Run Again from Image" asks first, naming
// the image and the connection. Every untitled document is closed unsaved (no "save changes?" dialog left behind). ---
{
  const machineSettings = path.join(userData, 'Machine', 'settings.json');
  const monitor = () => page.frameLocator('iframe.webview.ready').last().frameLocator('iframe#active-frame');
  /** Closes every editor, the untitled ones reverted first (their tabs named *.api.json / *.ui.json). */
  const closeUntitled = async () => {
    for (let i = 0; i < 4; i++) {
      const untitled = page.locator('.tabs-container .tab', { hasText: /\.(api|ui)\.json/ }).first();
      if ((await untitled.count()) === 0) break;
      await untitled.click();
      await palette('View: Revert and Close Editor');
    }
    await palette('View: Close All Editors');
  };
  /** The id of the job submitted since request `from`: named by the first request after its POST (not an older job's GET). */
  const jobSubmittedSince = async (from) => {
    const post = await until('a job submitted at the emulator', () => {
      const i = emu.requests.slice(from).findIndex((r) => r.method === 'POST' && /\/api\/v2\/jobs(\?|$)/.test(r.url));
      return i >= 0 ? from + i : undefined;
    });
    return submittedJobId(post + 1);
  };
  let convertedJob;

  await step(
    'UI format: the CodeLens "Convert to API Format" on a UI-format file opens the API graph beside it, untitled ui-convert.api.json',
    async () => {
      await clearNotifications();
      await palette('View: Close All Editors');
      try {
        await openFile('ui-convert.json');
        const lens = page
          .locator('.monaco-editor .codelens-decoration a', { hasText: 'Convert to API Format' })
          .first();
        await lens.waitFor();
        await pointerAway();
        await screenshot('convert-codelens');
        await lens.click();
        await page.locator('.tabs-container .tab.active', { hasText: 'ui-convert.api.json' }).waitFor();
        // Beside: two editor groups, the UI file in one and its API graph in the other.
        const groups = page.locator('.editor-group-container');
        await until('two editor groups', async () => (await groups.count()) === 2);
        const converted = page.locator('.editor-group-container.active .monaco-editor .view-lines');
        await converted.filter({ hasText: '"class_type": "EmptyImage"' }).waitFor();
        // The editor renders spaces as no-break spaces; its visible lines hold the whole (short) graph.
        const text = (await converted.innerText()).replace(/\u00a0/g, ' ');
        for (const s of ['"class_type": "ImageInvert"', '"class_type": "SaveImage"', '"title": "Red canvas"'])
          if (!text.includes(s)) throw new Error(`the converted graph lacks ${s}: ${text.slice(0, 400)}`);
        if (/Reroute|"Note"/.test(text)) throw new Error('the converted graph keeps the Reroute or the Note');
        await pointerAway(1100, 830); // below the text: no hover in the picture
        await screenshot('convert-beside');
      } finally {
        await closeUntitled();
      }
    },
  );

  await step(
    'UI format: Submit Workflow offers "Convert and Submit"; the converted graph is submitted and the monitor shows it succeeded',
    async () => {
      await clearNotifications();
      await writeSettings(machineSettings, { 'comfyCloud.openMonitorOnSubmit': true });
      await closeUntitled();
      await openFile('ui-convert.json');
      const from = emu.requests.length;
      await palette('Comfy Cloud: Submit Workflow');
      const offer = toast(/UI-format workflow/);
      await offer.waitFor();
      const button = offer.getByRole('button', { name: 'Convert and Submit' });
      await button.waitFor();
      if (emu.requests.slice(from).some((r) => r.method === 'POST'))
        throw new Error('something was sent before the choice');
      await pointerAway();
      await screenshot('convert-and-submit-offer');
      await button.click();
      const jobId = (convertedJob = await jobSubmittedSince(from));
      await page
        .locator('.tabs-container .tab', { hasText: jobId.slice(0, 8) })
        .first()
        .waitFor();
      await monitor()
        .locator('vscode-badge.status', { hasText: /succeeded/i })
        .waitFor();
      const thumb = monitor().locator('.gallery img.thumb').first();
      await loadedImage(thumb);
      // The monitor's header names the converted graph; a PNG output has its Workflow button.
      await monitor().locator('h1.name', { hasText: 'ui-convert.api.json' }).waitFor();
      await monitor().locator('.gallery vscode-button', { hasText: 'Workflow' }).first().waitFor();
      await pointerAway();
      await screenshot('convert-and-submit-monitor');
    },
  );

  await step(
    'image: "Open Workflow from Image" on the job\'s output in the Jobs view opens the graph that made it',
    async () => {
      if (!convertedJob) throw new Error('no job from the step before');
      await clearNotifications();
      await palette('View: Close All Editors');
      await showComfySidebar();
      // The Jobs view expanded (an earlier step may have collapsed it to give the Models view the sidebar's height).
      const jobsHeader = page.locator('.part.sidebar .pane-header', { hasText: /^\s*Jobs/ }).first();
      if ((await jobsHeader.getAttribute('aria-expanded')) !== 'true') await jobsHeader.click();
      const job = page
        .locator(`.pane-body .monaco-list-row[aria-label^="ui-convert.api.json ${convertedJob.slice(0, 8)}"]`)
        .first();
      await job.waitFor();
      if ((await job.getAttribute('aria-expanded')) !== 'true') await job.click();
      const output = page.locator('.pane-body .monaco-list-row', { hasText: /converted_\d+_?\.png/ }).first();
      await output.waitFor();
      await output.click({ button: 'right' });
      const item = page.locator('.monaco-menu .action-item', { hasText: 'Open Workflow from Image' }).first();
      await item.waitFor();
      try {
        await chooseMenuEntry(item);
        await page.locator('.tabs-container .tab.active', { hasText: /converted_\d+_\.api\.json/ }).waitFor();
        const text = (
          await page
            .locator('.editor-group-container.active .monaco-editor .view-lines')
            .filter({ hasText: '"class_type"' })
            .innerText()
        ).replace(/\u00a0/g, ' ');
        for (const s of ['EmptyImage', 'ImageInvert', 'SaveImage'])
          if (!text.includes(s)) throw new Error(`the image's graph lacks ${s}: ${text.slice(0, 400)}`);
        await pointerAway(1100, 830); // below the text: no hover in the picture
        await screenshot('open-workflow-from-image');
      } finally {
        await closeUntitled();
      }
    },
  );

  await step(
    'image: "Run Again from Image" asks first, naming the image and the connection; "Run Again" submits a new job',
    async () => {
      if (!convertedJob) throw new Error('no job from the steps before');
      await clearNotifications();
      const output = page.locator('.pane-body .monaco-list-row', { hasText: /converted_\d+_?\.png/ }).first();
      await output.waitFor();
      const from = emu.requests.length;
      await output.click({ button: 'right' });
      const item = page.locator('.monaco-menu .action-item', { hasText: 'Run Again from Image' }).first();
      await item.waitFor();
      await chooseMenuEntry(item);
      const dialog = page.locator('.monaco-dialog-box', { hasText: /Run converted_\d+_\.png again on/ });
      await dialog.waitFor();
      const words = (await dialog.innerText()).replace(/\s+/g, ' ');
      console.log(`     dialog: ${words.slice(0, 300)}`);
      if (emu.requests.slice(from).some((r) => r.method === 'POST'))
        throw new Error('something was sent before the confirmation');
      await pointerAway();
      await screenshot('run-again-from-image-confirm');
      await dialog.getByRole('button', { name: 'Run Again' }).click();
      const jobId = await jobSubmittedSince(from);
      if (jobId === convertedJob) throw new Error('the same job');
      await page
        .locator('.tabs-container .tab', { hasText: jobId.slice(0, 8) })
        .first()
        .waitFor();
      await monitor()
        .locator('vscode-badge.status', { hasText: /succeeded/i })
        .waitFor();
      await pointerAway();
      await screenshot('run-again-from-image-monitor');
      await palette('View: Close All Editors');
    },
  );
}
// --- end of UI-format workflows and images ---------------------------------------------------------------------------

// --- A v1 connection: the deprecation is said once (a notification) and in the status bar; a job submitted
// on it is followed in the monitor with a live preview from the WebSocket's binary frames, then its output ----------
// The connection points at the emulator directly (the recording proxy does not pass WebSocket upgrades); the settings
// are put back as found at the end.
{
  const machineSettings = path.join(userData, 'Machine', 'settings.json');
  const savedSettings = fs.existsSync(machineSettings) ? fs.readFileSync(machineSettings, 'utf8') : undefined;
  const V1_NAME = 'Engine (v1)';
  const monitor = () => page.frameLocator('iframe.webview.ready').last().frameLocator('iframe#active-frame');
  try {
    await step(
      'v1: a connection with "api": "v1" says once that v1 is deprecated; the status bar tooltip says it too',
      async () => {
        await clearNotifications();
        await palette('View: Close All Editors');
        await writeSettings(machineSettings, {
          'comfyCloud.connections': [{ name: V1_NAME, surface: 'emulator', baseUrl: emu.emulatorUrl, api: 'v1' }],
          'comfyCloud.activeConnection': V1_NAME,
          'comfyCloud.openMonitorOnSubmit': true,
        });
        // The sidebar open (the extension active, when only these steps run): the Jobs view shows the v1 job later.
        await showComfySidebar();
        const item = page.locator('.statusbar-item', { hasText: V1_NAME }).first();
        await item.waitFor();
        await toast(/v1 API, which is deprecated/).waitFor();
        const label = await item
          .locator('a')
          .first()
          .getAttribute('aria-label')
          .catch(() => null);
        console.log(`     status bar: ${label}`);
        if (!/v1 API \(deprecated\)/.test(label ?? ''))
          throw new Error(`the status bar's accessible label does not say v1 is deprecated: ${label}`);
        await pointerAway();
        await screenshot('v1-notice');
      },
    );

    await step(
      'v1: a job submitted on the v1 connection is followed in the monitor with a live preview, then its output thumbnail',
      async () => {
        await clearNotifications();
        // Eight nodes, each held at its start: the first until the monitor is open (so no frame comes before it), the
        // second until the monitor shows the preview the first one sent over the socket.
        fs.writeFileSync(path.join(ws, 'v1-chain.json'), JSON.stringify(invertChain(6, 'v1-chain', 16711680), null, 2));
        await openFile('v1-chain.json');
        await emu.holdNodes({});
        try {
          await palette('Comfy Cloud: Submit Workflow');
          const { jobId } = await emu.heldAt(undefined, 0);
          const tab = page.locator('.tabs-container .tab', { hasText: /v1-chain\.json · / }).first();
          await tab.waitFor();
          await monitor()
            .locator('vscode-badge.status', { hasText: /running/i })
            .waitFor();
          await emu.releaseNodes(jobId);
          const held = await emu.heldAt(jobId, 1);
          const preview = monitor().locator('img.preview-img');
          await until('the preview image shown and decoded while the v1 job runs', () =>
            preview.evaluate((el) => !el.hidden && el.complete && el.naturalWidth > 0),
          );
          const percent = (await monitor().locator('section.progress .percent').textContent())?.trim();
          console.log(`     held at node ${held.nodeId} (${held.classType}); the monitor shows ${percent}`);
          if (percent === '100%') throw new Error('the monitor shows 100% while the job still runs');
          await pointerAway();
          await screenshot('v1-monitor-running');
        } finally {
          await emu.clearHolds();
        }
        const thumb = monitor().locator('.gallery img.thumb').first();
        await thumb.waitFor();
        await monitor()
          .locator('vscode-badge.status', { hasText: /succeeded/i })
          .waitFor();
        if ((await page.locator('.statusbar-item', { hasText: V1_NAME }).count()) === 0)
          throw new Error('the status bar no longer shows the v1 connection');
        await pointerAway();
        await screenshot('v1-monitor');
      },
    );
  } finally {
    if (savedSettings === undefined) fs.rmSync(machineSettings, { force: true });
    else fs.writeFileSync(machineSettings, savedSettings);
  }
}
// --- end of the v1 connection ----------------------------------------------------------------------------------------

// --- The workflow graph beside its JSON ("Open Workflow Graph to the Side"): a 3-node and a 60-node workflow (the
// fixture graph-60.json: five API-format workflows of test/fixtures/convert side by side, ids renumbered) in light,
// dark and high contrast; a click on a node selects its JSON; the cursor in the JSON highlights its node; the banner
// on invalid JSON. Every editor it opens is closed, the JSON reverted (no dirty editor is left). ----------------------
{
  const graphFrame = () => page.frameLocator('iframe.webview.ready').last().frameLocator('iframe#active-frame');
  const graphNode = (title) => graphFrame().locator('g.graph-node', { hasText: title }).first();
  /** The graph page's background and a node box's fill: what the theme decides. */
  const graphColors = () =>
    graphFrame()
      .locator('body')
      .evaluate((b) => {
        const view = b.ownerDocument.defaultView;
        const box = b.ownerDocument.querySelector('.graph-node-box');
        return `${view.getComputedStyle(b).backgroundColor} / ${box ? view.getComputedStyle(box).fill : '-'}`;
      });
  /** Opens `file` and its graph with the editor title button; resolves once `count` nodes are drawn. */
  const openGraph = async (file, count) => {
    await palette('View: Close All Editors');
    await openFile(file);
    await page.locator('.editor-actions .action-item a[aria-label*="Open Workflow Graph to the Side"]').first().click();
    await page
      .locator('.tabs-container .tab', { hasText: `Graph: ${file}` })
      .first()
      .waitFor();
    await until(
      async () =>
        `${count} nodes drawn: ${await graphFrame()
          .locator('g.graph-node')
          .count()
          .catch(() => 0)}`,
      async () =>
        (await graphFrame()
          .locator('g.graph-node')
          .count()
          .catch(() => 0)) === count,
    );
  };
  /** Pictures of the graph in light, dark and high contrast, each once its colors followed the theme; back to the first theme. */
  const inThemes = async (name) => {
    let original = '';
    const seen = [await graphColors()];
    try {
      for (const [theme, suffix] of [
        ['Light Modern', 'light'],
        ['Dark Modern', 'dark'],
        ['Dark High Contrast', 'high-contrast'],
      ]) {
        const was = await pickColorTheme(theme);
        original ||= was;
        if (was !== theme) {
          const now = await until(
            async () => `the graph's colors did not follow ${theme}: ${await graphColors().catch(() => null)}`,
            async () => {
              const c = await graphColors().catch(() => null);
              return c && !seen.includes(c) ? c : undefined;
            },
          );
          seen.push(now);
        }
        console.log(`     ${theme}: ${await graphColors()}`);
        await pointerAway(600, 700);
        await screenshot(`${name}-${suffix}`);
      }
    } finally {
      console.log(`     back to: ${original}`);
      if (original) await pickColorTheme(original).catch(() => {});
    }
  };
  /** The editor's selection as the status bar tells it (`Ln 7, Col 3 (120 selected)`). */
  const selectionStatus = () =>
    page
      .locator('.statusbar-item#status\\.editor\\.selection')
      .first()
      .innerText()
      .catch(() => '');

  await step(
    'graph: "Open Workflow Graph to the Side" shows a 3-node workflow beside its JSON, in light, dark and high contrast',
    async () => {
      await openGraph('invert.json', 3);
      await inThemes('graph-3-nodes');
    },
  );

  await step(
    'graph: a 60-node workflow beside its JSON, laid out, with its minimap, in light, dark and high contrast',
    async () => {
      await openGraph('graph-60.json', 60);
      await graphFrame().locator('.graph-minimap').waitFor();
      await inThemes('graph-60-nodes');
    },
  );

  await step(
    "graph: the 60-node workflow is laid out left to right: no two nodes overlap, every link's target is right of its source",
    async () => {
      // The page lays an API-format graph out itself (dagre, layered left to right): without that call every node would
      // sit at one spot. Read where the page put each node (its box's translate and size), against the file's links.
      await openGraph('graph-60.json', 60);
      const boxes = await graphFrame()
        .locator('g.graph-node')
        .evaluateAll((gs) =>
          Object.fromEntries(
            gs.map((g) => {
              const at = /translate\(\s*(-?[\d.e+-]+)[ ,]+(-?[\d.e+-]+)\s*\)/.exec(g.getAttribute('transform') ?? '');
              const box = g.querySelector('rect.graph-node-box');
              return [
                g.getAttribute('data-id'),
                at && box
                  ? {
                      x: +at[1],
                      y: +at[2],
                      w: +(box.getAttribute('width') ?? 0),
                      h: +(box.getAttribute('height') ?? 0),
                    }
                  : null,
              ];
            }),
          ),
        );
      const ids = Object.keys(boxes);
      const unplaced = ids.filter(
        (id) =>
          !boxes[id] ||
          ![boxes[id].x, boxes[id].y, boxes[id].w, boxes[id].h].every(Number.isFinite) ||
          boxes[id].w <= 0,
      );
      if (unplaced.length > 0) throw new Error(`nodes without a position or size: ${unplaced.join(', ')}`);
      const overlaps = [];
      for (let i = 0; i < ids.length; i++) {
        for (let j = i + 1; j < ids.length; j++) {
          const [a, b] = [boxes[ids[i]], boxes[ids[j]]];
          if (a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h)
            overlaps.push(`${ids[i]}/${ids[j]}`);
        }
      }
      if (overlaps.length > 0)
        throw new Error(
          `${overlaps.length} pairs of nodes overlap, e.g. ${overlaps.slice(0, 5).join(', ')}: ${JSON.stringify(boxes[ids[0]])}`,
        );
      const workflow = JSON.parse(fs.readFileSync(path.join(ws, 'graph-60.json'), 'utf8'));
      const links = Object.entries(workflow).flatMap(([to, node]) =>
        Object.values(node.inputs ?? {})
          .filter(
            (v) => Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && v[0] in workflow && v[0] !== to,
          )
          .map((v) => [v[0], to]),
      );
      if (links.length < 59) throw new Error(`the fixture has only ${links.length} links: it proves little`);
      const backwards = links.filter(([from, to]) => !(boxes[from].x + boxes[from].w <= boxes[to].x));
      if (backwards.length > 0)
        throw new Error(
          `links whose target is not right of their source: ${backwards
            .slice(0, 5)
            .map(([f, t]) => `${f} (x ${boxes[f].x}) → ${t} (x ${boxes[t].x})`)
            .join(', ')}`,
        );
      const columns = new Set(ids.map((id) => boxes[id].x)).size;
      console.log(
        `     ${ids.length} nodes in ${columns} columns, ${links.length} links all left to right, no overlap`,
      );
      await pointerAway(600, 700);
      await screenshot('graph-60-nodes-layout');
    },
  );

  await step('graph: clicking a node selects its JSON in the editor', async () => {
    await openGraph('invert.json', 3);
    await graphNode('Invert').click();
    const status = await until(
      async () => `the JSON of node 2 selected: ${await selectionStatus()}`,
      async () => {
        const text = await selectionStatus();
        return /Ln 7, Col 3 \(\d+ selected\)|\(\d+ selected\)/.test(text) ? text : undefined;
      },
    );
    console.log(`     status bar: ${status}`);
    await until('node 2 highlighted', async () =>
      /\bselected\b/.test((await graphNode('Invert').getAttribute('class')) ?? ''),
    );
    await pointerAway(600, 700);
    await screenshot('graph-click-selects-json');
  });

  await step('graph: moving the cursor in the JSON highlights the node under it', async () => {
    await page.locator('.editor-instance .monaco-editor .view-lines').first().click();
    await gotoLineEnd(13, 3);
    await until(
      async () => `node 3 highlighted: ${await graphNode('Save').getAttribute('class')}`,
      async () => /\bselected\b/.test((await graphNode('Save').getAttribute('class')) ?? ''),
    );
    if (/\bselected\b/.test((await graphNode('Invert').getAttribute('class')) ?? ''))
      throw new Error('node 2 is still highlighted');
    await pointerAway(600, 700);
    await screenshot('graph-cursor-highlights-node');
  });

  await step('graph: invalid JSON keeps the graph under a banner saying where', async () => {
    const invertOnDisk = fs.readFileSync(path.join(ws, 'invert.json'), 'utf8');
    try {
      await gotoLineEnd(10);
      await page.keyboard.type(',,');
      const banner = graphFrame().locator('.graph-banner');
      await until(
        async () => `the banner: ${await banner.innerText().catch(() => '')}`,
        async () => /line 10, column \d+/.test(await banner.innerText().catch(() => '')),
      );
      console.log(`     banner: ${await banner.innerText()}`);
      if ((await graphFrame().locator('g.graph-node').count()) !== 3) throw new Error('the graph was not kept');
      await pointerAway(600, 700);
      await screenshot('graph-invalid-json-banner');
    } finally {
      // The commas taken out by undo, in the editor (no focus change: code-server saves a changed file after a delay,
      // and on a focus change, so a revert through the palette can save the commas first and keep them).
      await page.locator('.editor-instance .monaco-editor .view-lines').first().click();
      await page.keyboard.press('Control+Z');
    }
    await until('the banner gone once the JSON is valid again', async () => {
      if (await graphFrame().locator('.graph-banner').isHidden()) return true;
      await page.keyboard.press('Control+Z'); // the two commas, had they been taken as two edits
      return false;
    });
    await until(
      'no modified editor left (saved as it was)',
      async () => (await page.locator('.tabs-container .tab.dirty').count()) === 0,
    );
    await palette('View: Close All Editors');
    // No editor holds the file now: what a later step opens is the fixture as it was, whatever was saved meanwhile.
    if (fs.readFileSync(path.join(ws, 'invert.json'), 'utf8') !== invertOnDisk) {
      console.log('     invert.json was left changed on disk: written back');
      fs.writeFileSync(path.join(ws, 'invert.json'), invertOnDisk);
    }
  });
}
// --- end of the workflow graph ------------------------------------------------------------------------------------

// --- batches: Run with Variations, the batch in the Jobs view, the contact sheet ---------------------------------------
{
  /** The contact sheet's page (the last webview: every other editor is closed first). */
  const sheetFrame = () => page.frameLocator('iframe.webview.ready').last().frameLocator('iframe#active-frame');
  const submissions = (from) =>
    emu.requests.slice(from).filter((r) => r.method === 'POST' && /\/api\/v2\/jobs$/.test(r.url));
  /** Waits until the sheet says its batch finished with `count` cells, each succeeded with its image loaded. */
  const sheetDone = async (count, layout) => {
    const sheet = sheetFrame().locator('#sheet');
    await until(
      async () =>
        `the sheet finished with ${count} succeeded cells (${layout}): ${await sheet.getAttribute('data-layout').catch(() => '?')}, finished ${await sheet.getAttribute('data-finished').catch(() => '?')}, states ${await sheetFrame()
          .locator('[data-cell-index]')
          .evaluateAll((els) => els.map((e) => e.getAttribute('data-state')).join(' '))
          .catch(() => '?')}`,
      async () =>
        (await sheet.getAttribute('data-finished').catch(() => null)) === 'true' &&
        (await sheet.getAttribute('data-layout').catch(() => null)) === layout &&
        (await sheetFrame().locator('[data-cell-index][data-state="succeeded"]').count()) === count,
      120000,
    );
    await until(
      'every thumbnail loaded',
      async () =>
        (await sheetFrame()
          .locator('img.thumb')
          .evaluateAll((imgs) => imgs.filter((i) => i.complete && i.naturalWidth > 0).length)) === count,
    );
  };

  await step(
    'batch: "Run with Variations…" on the seed of a KSampler asks how the values are given, then takes a range',
    async () => {
      try {
        await seedRange();
      } finally {
        // Nothing left behind for the steps after (a quick input, a modified file and its "save changes?" dialog).
        await page.keyboard.press('Escape');
        if (await page.locator('.tabs-container .tab.dirty').count()) await palette('View: Revert and Close Editor');
      }
    },
  );
  async function seedRange() {
    await clearNotifications();
    await palette('View: Close All Editors');
    await openFile('stable-diffusion.json');
    // The cursor on the seed's value (line 5: "seed": 156680208700286,).
    await gotoLineEnd(5, 2);
    await paletteAsking('Run with Variations', 'Run with Variations: 3.seed');
    const pick = page.locator('.quick-input-widget');
    await pick.locator('.quick-input-list .monaco-list-row', { hasText: 'Range (e.g. 1..8)' }).waitFor();
    await pointerAway(600, 700);
    await screenshot('batch-variations-on-a-seed');
    await page.keyboard.press('Enter');
    // The range's input box (its placeholder is an example range) before any typing: keys typed earlier go to the editor.
    const box = pick.locator('input[placeholder="1..8"]');
    await box.waitFor();
    await box.fill('1..0');
    await pick
      .locator('.quick-input-message', { hasText: /no values|start is above/i })
      .first()
      .waitFor();
    await pointerAway(600, 700);
    await screenshot('batch-range-with-no-values-refused');
    await box.fill('1..8');
    await until(
      'the range accepted',
      async () => !(await pick.locator('.quick-input-message', { hasText: /no values/ }).isVisible()),
    );
    // The emulator runs no KSampler: this batch is not run (the next step runs one the emulator can).
    await page.keyboard.press('Escape');
    await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
    if (await page.locator('.tabs-container .tab.dirty').count())
      throw new Error('a key reached the editor: the file is modified');
  }

  await step(
    'batch: "Run with Variations…" on node 1\'s color with a list of six colors: six jobs, one per value, and the contact sheet fills with their images',
    async () => {
      await clearNotifications();
      await palette('View: Close All Editors');
      const from = emu.requests.length;
      await openFile('invert.json');
      // The cursor in the color's value (line 4 ends: "color": 16711680 },).
      await gotoLineEnd(4, 4);
      await paletteAsking('Run with Variations', 'Run with Variations: 1.color');
      const pick = page.locator('.quick-input-widget');
      await pick.locator('.quick-input-list .monaco-list-row', { hasText: 'List (comma or line separated)' }).click();
      await pick.locator('input').fill('16711680, 65280, 255, 16776960, 65535, 16711935');
      await page.keyboard.press('Enter');
      await page.locator('.tabs-container .tab', { hasText: 'Contact Sheet: invert.json' }).first().waitFor();
      await sheetDone(6, 'flow');
      const posts = submissions(from);
      if (posts.length !== 6) throw new Error(`${posts.length} submissions at the emulator, not 6`);
      await pointerAway(600, 700);
      await screenshot('batch-contact-sheet-list');
    },
  );

  await step(
    'batch: the Jobs view shows the batch as one item "6/6 done" with its six jobs beneath, labelled by their values',
    async () => {
      await clearNotifications();
      await showComfySidebar();
      // The Jobs view gets the sidebar's height (the tree draws only the rows in view).
      const restore = await onlyViews('Jobs');
      try {
        await jobsViewBatch();
      } finally {
        await restore();
      }
    },
  );
  async function jobsViewBatch() {
    const item = page.locator('.pane-body .monaco-list-row[aria-label^="batch, invert.json, 6/6 done"]').first();
    await item.waitFor();
    if ((await item.getAttribute('aria-expanded')) !== 'true') await item.click();
    await page
      .locator('.pane-body .monaco-list-row', { hasText: /^\s*0-16711680/ })
      .first()
      .waitFor();
    const children = await item.evaluate((el) => {
      const index = +el.getAttribute('data-index');
      const level = +el.getAttribute('aria-level');
      const rows = [...el.closest('.monaco-list').querySelectorAll('.monaco-list-row')].sort(
        (a, b) => +a.getAttribute('data-index') - +b.getAttribute('data-index'),
      );
      const out = [];
      for (const r of rows.filter((r) => +r.getAttribute('data-index') > index)) {
        const l = +r.getAttribute('aria-level');
        if (l <= level) break;
        if (l === level + 1)
          out.push({ label: r.getAttribute('aria-label') ?? '', setSize: +r.getAttribute('aria-setsize') });
      }
      return out;
    });
    console.log(`     beneath the batch: ${children.map((c) => c.label.split(',')[0]).join(' | ')}`);
    // The tree says how many rows share the children's level (aria-setsize), drawn or not.
    if (children[0]?.setSize !== 6) throw new Error(`${children[0]?.setSize} jobs beneath the batch, not 6`);
    if (!children.every((c, i) => c.label.startsWith(`${i}-`)))
      throw new Error(`the jobs are not labelled by their variations: ${children.map((c) => c.label).join(' | ')}`);
    await item.click({ button: 'right' });
    await page.locator('.monaco-menu .action-label', { hasText: 'Open Contact Sheet' }).first().waitFor();
    await pointerAway(900, 700);
    await screenshot('batch-jobs-view');
    await page.keyboard.press('Escape');
  }

  await step(
    'batch: a batch file of two inputs (3 colors × 2 widths), run from its "Run Batch" CodeLens: the contact sheet as rows and columns',
    async () => {
      await clearNotifications();
      await palette('View: Close All Editors');
      const from = emu.requests.length;
      fs.writeFileSync(
        path.join(ws, 'grid.batch.json'),
        `${JSON.stringify({ workflow: 'invert.json', set: { '1.color': [16711680, 65280, 255], '1.width': [40, 64] } }, null, 2)}\n`,
      );
      await openFile('grid.batch.json');
      await page.locator('.codelens-decoration a', { hasText: 'Run Batch' }).first().click();
      await page.locator('.tabs-container .tab', { hasText: 'Contact Sheet: invert.json' }).first().waitFor();
      await sheetDone(6, 'grid');
      const posts = submissions(from);
      if (posts.length !== 6) throw new Error(`${posts.length} submissions at the emulator, not 6`);
      const headers = await sheetFrame().locator('th').allInnerTexts();
      console.log(`     headers: ${headers.join(' | ')}`);
      await pointerAway(600, 700);
      await screenshot('batch-contact-sheet-grid');
    },
  );
}
// --- end of batches ------------------------------------------------------------------------------------------------

console.log(`ui suite took ${Date.now() - t0} ms; screenshots in ${results}`);
await cleanup();
process.exit(summary(SUITE, passed, failed));
