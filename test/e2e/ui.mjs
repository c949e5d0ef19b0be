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
//      delay per node, default 700: makes the running job observable), STEP_TIMEOUT_MS (default 30000),
//      EXT_DEV_PATH (load the extension from this folder instead of the installed one; needs the smoke-test flag)
import fs from 'node:fs';
import path from 'node:path';
import { startRecordedEmulator } from './emulator.mjs';
import { ROOT, workspaceDir, launch, remoteUri, summary, workbenchUrl } from './launch.mjs';

const SUITE = 'ui';
const base = process.env.CS_URL;
const userData = process.env.CS_USER_DATA;
const results = process.env.RESULTS || path.join(ROOT, 'test-results');
const nodeDelayMs = +(process.env.NODE_DELAY_MS || 700);
const stepTimeout = +(process.env.STEP_TIMEOUT_MS || 30000);

function cannotRun(why) {
  console.log(`${SUITE}: could not run: ${why}`);
  process.exit(summary(SUITE, 0, 1));
}
if (!base) cannotRun('CS_URL is not set (start code-server with scripts/start-code-server.sh)');
if (!userData || !fs.existsSync(userData)) cannotRun(`CS_USER_DATA (code-server's --user-data-dir) is not set or missing: ${userData}`);

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
seedSettings(path.join(userData, 'Machine', 'settings.json'), { 'comfyCloud.baseUrl': emu.baseUrl });

const ws = workspaceDir();
const payload = process.env.EXT_DEV_PATH ? [['extensionDevelopmentPath', remoteUri(base, process.env.EXT_DEV_PATH)]] : [];

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
async function step(name, fn) {
  const t = Date.now();
  try {
    await fn();
    passed++;
    console.log(`ok   ${name} (${Date.now() - t} ms)`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e.message.split('\n').slice(0, 3).join(' | ')}`);
    await screenshot(`FAILED-${name.replace(/\W+/g, '-').slice(0, 40)}`).catch(() => {});
  }
}

const toasts = page.locator('.notifications-toasts');
const toast = (text) => toasts.locator('.notification-toast', { hasText: text });

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
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible' });
  await input.fill('>' + command);
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: command }).first();
  await row.waitFor();
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
}

async function clearNotifications() {
  await palette('Notifications: Clear All Notifications').catch(() => page.keyboard.press('Escape'));
  await toasts.locator('.notification-toast').first().waitFor({ state: 'detached', timeout: 5000 }).catch(() => {});
}

const t0 = Date.now();
let jobsBefore = 0;

await step('workbench loads with the fixture workspace', async () => {
  await page.goto(workbenchUrl(base, ws, payload));
  await page.locator('.monaco-workbench').waitFor({ timeout: 90000 });
  await page.locator('.statusbar').waitFor();
  await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'invert.json' }).waitFor({ timeout: 60000 });
  await screenshot('workbench');
});

await step('quick open shows invert.json in an editor', async () => {
  await quickOpen('invert.json');
  await page.locator('.monaco-editor .view-lines', { hasText: 'EmptyImage' }).waitFor();
  await screenshot('invert-json-open');
});

await step('"Comfy Cloud: Submit Workflow" from the command palette shows a progress notification', async () => {
  jobsBefore = emu.requests.length;
  await palette('Comfy Cloud: Submit Workflow');
  const progress = toast('Comfy Cloud: invert.json');
  await progress.waitFor({ timeout: 20000 });
  // Catch it while the job runs (the emulator waits NODE_DELAY_MS per node): node progress and a Cancel button.
  await toast(/Comfy Cloud: invert\.json[\s\S]*running/).waitFor({ timeout: 20000 });
  await progress.getByRole('button', { name: 'Cancel' }).waitFor();
  await page.waitForTimeout(250); // the toast's slide-in animation
  await screenshot('progress');
});

await step('the success notification says the job succeeded and offers "Open Output"', async () => {
  const done = toast(/job \S+ succeeded — 1 output saved/);
  await done.waitFor({ timeout: 60000 });
  await done.getByRole('button', { name: 'Open Output' }).waitFor();
  const posts = emu.requests.slice(jobsBefore).filter((r) => r.method === 'POST' && /\/jobs/.test(r.url));
  if (posts.length !== 1) throw new Error(`expected one job submission at the emulator, saw ${JSON.stringify(emu.requests.slice(jobsBefore))}`);
  await screenshot('success-notification');
});

await step('"Open Output" opens the 64×64 PNG in an image preview tab', async () => {
  await toast(/succeeded/).getByRole('button', { name: 'Open Output' }).click();
  const tab = page.locator('.tabs-container .tab.active', { hasText: /invert_\d+_?\.png/ });
  await tab.waitFor();
  const title = (await tab.innerText()).replace(/\s+/g, '');
  // VS Code's image preview is a webview: outer iframe (host) → inner iframe (content) → <img>.
  const img = page.locator('iframe.webview.ready').last().contentFrame().locator('iframe#active-frame').contentFrame().locator('img');
  await img.first().waitFor({ state: 'attached' });
  let size;
  for (let i = 0; i < 50; i++) {
    size = await img.first().evaluate((el) => [el.naturalWidth, el.naturalHeight, el.complete]);
    if (size[2] && size[0] > 0) break;
    await page.waitForTimeout(100);
  }
  if (size[0] !== 64 || size[1] !== 64) throw new Error(`image preview shows ${size[0]}×${size[1]}, expected 64×64`);
  console.log(`     tab "${title}", <img> ${size[0]}×${size[1]}`);
  const saved = fs.readdirSync(path.join(ws, '.comfy', 'outputs'), { recursive: true }).filter((f) => String(f).endsWith('.png'));
  if (saved.length !== 1) throw new Error(`expected one PNG under ${ws}/.comfy/outputs, found ${JSON.stringify(saved)}`);
  await screenshot('output-png-open');
});

await step('Cancel on the progress notification cancels the job on the server (POST cancel)', async () => {
  await clearNotifications();
  // The image preview (a webview) has the focus: click the workflow's tab rather than typing Ctrl+P into it.
  await page.locator('.tabs-container .tab', { hasText: 'invert.json' }).click();
  await page.locator('.tabs-container .tab.active', { hasText: 'invert.json' }).waitFor();
  const from = emu.requests.length;
  await palette('Comfy Cloud: Submit Workflow');
  const progress = toast(/Comfy Cloud: invert\.json[\s\S]*(running|queued)/);
  await progress.waitFor({ timeout: 20000 });
  await progress.getByRole('button', { name: 'Cancel' }).click();
  const canceled = toast(/job \S+ was canceled/);
  await canceled.waitFor({ timeout: 30000 });
  const sent = emu.requests.slice(from);
  const cancel = sent.filter((r) => r.method === 'POST' && /\/jobs\/[^/]+\/cancel/.test(r.url));
  if (cancel.length !== 1) throw new Error(`expected one POST …/cancel at the emulator, saw ${JSON.stringify(sent.map((r) => `${r.method} ${r.url}`))}`);
  await page.mouse.move(600, 450);
  await page.waitForTimeout(250);
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
  // Show the whole message (a long one without buttons is collapsed to one line): expand it, mouse out of the way.
  // Its toolbar (with the expand button) shows only while the pointer is on the toast.
  await error.hover();
  const expand = error.locator('.codicon-notifications-expand').first();
  if (await expand.isVisible()) await expand.click({ timeout: 5000 });
  await page.mouse.move(600, 450);
  await page.waitForTimeout(250);
  await screenshot('ui-format-refused');
});

await step('an invalid_workflow puts the missing input on its own node in Problems (not on a later node with that field)', async () => {
  await clearNotifications();
  await quickOpen('missing-input.json');
  await page.locator('.monaco-editor .view-lines', { hasText: 'ImageInvert' }).waitFor();
  await palette('Comfy Cloud: Submit Workflow');
  await toast(/invalid/).waitFor({ timeout: 20000 });
  await palette('View: Focus Problems');
  // Node "2" (line 3) lacks `image`; node "3" (line 4) has one: the entry belongs on line 3.
  const row = page.locator('.markers-panel .monaco-list-row', { hasText: /image/ }).first();
  await row.waitFor({ timeout: 10000 });
  const text = (await row.innerText()).replace(/\s+/g, ' ');
  if (!/\[Ln 3, Col \d+\]/.test(text)) throw new Error(`the Problems entry is not on node "2" (line 3): ${text}`);
  console.log(`     Problems: ${text}`);
  await page.mouse.move(600, 300);
  await page.waitForTimeout(250);
  await screenshot('problems-missing-input');
});

await step('the Comfy Cloud sidebar opens from its activity-bar icon and lists the jobs submitted here (Running / Recent)', async () => {
  await clearNotifications();
  await page.locator('.activitybar .action-item a[aria-label^="Comfy Cloud"]').first().click();
  const recent = page.locator('.pane-body .monaco-list-row', { hasText: 'Recent' });
  await recent.waitFor({ timeout: 20000 });
  // The succeeded and the canceled run of invert.json, both under Recent.
  const rows = page.locator('.pane-body .monaco-list-row', { hasText: 'invert.json' });
  await rows.nth(1).waitFor({ timeout: 20000 });
  const texts = (await rows.allInnerTexts()).map((t) => t.replace(/\s+/g, ' '));
  console.log(`     jobs: ${JSON.stringify(texts)}`);
  await page.mouse.move(600, 450);
  await page.waitForTimeout(250);
  await screenshot('jobs-view');
});

console.log(`ui suite took ${Date.now() - t0} ms; screenshots in ${results}`);
await cleanup();
process.exit(summary(SUITE, passed, failed));
