// Shared helpers of the real-VS-Code drivers: Debian's chromium through playwright-core, the workbench URL, and
// a suite counter that always ends with a line `<suite>: N passed, N failed`.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);

/** The repository root (this file is test/e2e/launch.mjs). */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');

/** Debian's chromium (`apt-get install chromium`); CHROMIUM overrides. */
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

/** Launches headless chromium; throws a message naming what is missing when it cannot. */
export async function launch() {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is not installed (${CHROMIUM} not found). Install Debian's package: apt-get install -y chromium (scripts/setup-vscode.sh does it as root), or set CHROMIUM to a chromium binary.`,
    );
  }
  let chromium;
  try {
    ({ chromium } = require('playwright-core'));
  } catch (e) {
    throw new Error(`playwright-core is not installed (${e.message.split('\n')[0]}); run npm ci.`);
  }
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'comfy-pw-chromium-'));
  let context;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1400, height: 900 },
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-dev-shm-usage',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  } catch (e) {
    fs.rmSync(userDataDir, { recursive: true, force: true });
    throw new Error(`Chromium (${CHROMIUM}) could not be started: ${e.message.split('\n')[0]}`);
  }
  const page = context.pages()[0] || (await context.newPage());
  return {
    context,
    page,
    close: async () => {
      await context.close().catch(() => {});
      fs.rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/** The workbench URL opening `folder`, with a `payload` (array of [key, value] pairs) if given. */
export function workbenchUrl(base, folder, payload = []) {
  const all = [['skipWelcome', 'true'], ['skipReleaseNotes', 'true'], ...payload];
  return `${base}/?folder=${encodeURIComponent(folder)}&payload=${encodeURIComponent(JSON.stringify(all))}`;
}

/** A `vscode-remote://` URI of a server-side path (the authority must be the page's host:port). */
export function remoteUri(base, p) {
  return `vscode-remote://${new URL(base).host}${p}`;
}

/**
 * The folder to open: WS_DIR if set, else a temporary copy of test/fixtures/workspace (so outputs never land in
 * the work tree), removed when the process exits.
 */
export function workspaceDir() {
  if (process.env.WS_DIR) return path.resolve(process.env.WS_DIR);
  const dest = fs.mkdtempSync(path.join(os.tmpdir(), 'comfy-ws-'));
  fs.cpSync(path.join(ROOT, 'test/fixtures/workspace'), dest, { recursive: true });
  process.on('exit', () => fs.rmSync(dest, { recursive: true, force: true }));
  return dest;
}

/** Prints the suite's closing line and returns the exit status. */
export function summary(suite, passed, failed) {
  console.log(`${suite}: ${passed} passed, ${failed} failed`);
  return failed > 0 || passed === 0 ? 1 : 0;
}
