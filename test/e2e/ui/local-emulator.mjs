/* global fetch, document -- Node's; document in the functions evaluated in the page */
// UI suite, the Local emulator the extension starts: a job running on it goes on through a window reload, the
// connections menu says whether it runs, and Stop Local Emulator stops it. It puts the machine settings back exactly as
// found, so the areas after it see the settings of the areas before.
import fs from 'node:fs';
import path from 'node:path';
import {
  machineSettings,
  page,
  screenshot,
  settled,
  step,
  pointerAway,
  toast,
  until,
  writeSettings,
  ws,
} from './harness.mjs';
import { clearNotifications, invertChain, openFile, palette, paletteAsking } from './helpers.mjs';

/** The fixtures of the tests (UI-format workflows of real ComfyUI examples under convert/). */
const fixtures = path.join(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'fixtures');

/** The steps of the Local emulator, in order. */
export async function localEmulatorSteps() {
  const savedSettings = fs.existsSync(machineSettings) ? fs.readFileSync(machineSettings, 'utf8') : undefined;
  const settings = () => JSON.parse(fs.readFileSync(machineSettings, 'utf8'));
  /** The base URL of the connection "Local emulator" once Start Local Emulator wrote it. */
  const localUrl = () =>
    (settings()['comfyCloud.connections'] ?? []).find((c) => c.name === 'Local emulator')?.baseUrl ?? undefined;
  const jobsAt = async (url) => (await (await fetch(`${url}/api/v2/jobs?limit=10`)).json()).jobs;
  const connectionItem = (text) => page.locator('.statusbar-item', { hasText: text }).first();
  /**
   * The connections menu's row of the Local emulator (the menu opened from the palette: the status bar item of a
   * stopped emulator starts it), its text read, the menu closed again.
   */
  const menuRow = async (name) => {
    await paletteAsking('Comfy Cloud: Switch Connection', 'Comfy Cloud: Connections');
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Local emulator' }).first();
    await row.waitFor();
    await settled();
    await screenshot(name);
    const text = await row.innerText();
    await page.keyboard.press('Escape');
    await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
    return text;
  };
  let started = false;
  try {
    await step(
      'Local emulator: a job running on it goes on through "Developer: Reload Window" and succeeds; the connections menu then says the emulator runs (its pid, the same process)',
      async () => {
        await clearNotifications();
        await palette('View: Close All Editors');
        // Slow enough that the job still runs when the window reloads: 5 nodes, 1.5 s each.
        await writeSettings(machineSettings, { 'comfyCloud.emulator.nodeDelayMs': 1500 });
        await palette('Comfy Cloud: Start Local Emulator');
        started = true;
        const url = await until('Start Local Emulator wrote the connection "Local emulator"', localUrl);
        await connectionItem('Local emulator').waitFor();
        fs.writeFileSync(
          path.join(ws, 'local-reload.json'),
          JSON.stringify(invertChain(3, 'local-reload'), null, 2) + '\n',
        );
        await openFile('local-reload.json');
        await palette('Comfy Cloud: Submit Workflow');
        const job = await until('the job runs on the Local emulator', async () =>
          (await jobsAt(url)).find((j) => j.status === 'running'),
        );
        const before = await menuRow('local-emulator-menu-before-reload');
        const pid = /running \(pid (\d+)\)/.exec(before)?.[1];
        if (!pid) throw new Error(`the menu does not say the emulator runs: ${JSON.stringify(before)}`);
        const navigated = page.waitForEvent('framenavigated', (f) => f === page.mainFrame());
        await palette('Developer: Reload Window');
        await navigated;
        await page.locator('.monaco-workbench').waitFor({ timeout: 90000 });
        const ended = await until(`job ${job.id} ends`, async () => {
          const j = await (await fetch(`${url}/api/v2/jobs/${job.id}`)).json();
          return ['succeeded', 'failed', 'canceled'].includes(j.status) ? j : undefined;
        });
        if (ended.status !== 'succeeded')
          throw new Error(`the job running during the reload ended ${ended.status}: ${JSON.stringify(ended.error)}`);
        // The Jobs view of the new window lists it.
        await page.locator('.activitybar .action-item a[aria-label^="Comfy Cloud"]').first().click();
        await page
          .locator('.part.sidebar .monaco-list-row', { hasText: job.id.slice(0, 8) })
          .first()
          .waitFor();
        const after = await until('the menu says the emulator runs after the reload', async () => {
          const text = await menuRow('local-emulator-menu-after-reload');
          return text.includes(`running (pid ${pid})`) ? text : undefined;
        });
        console.log(`     menu: ${after.replace(/\s+/g, ' ')}`);
      },
    );

    await step(
      'first hour: on an API workflow with the emulator healthy, the language status says the node definitions are not loaded yet, with Load (no fault)',
      async () => {
        await clearNotifications();
        await palette('View: Close All Editors');
        await openFile('local-reload.json');
        const item = page.locator('.statusbar-item[id="status.languageStatus"]').first();
        await item.hover();
        const hover = page.locator('.workbench-hover, .monaco-hover', { hasText: 'Node definitions' }).first();
        await hover.waitFor();
        const text = await hover.innerText();
        if (/unknown|Refresh Node Definitions/.test(text) && !/node classes from/.test(text))
          throw new Error(`the language status reads as a fault: ${JSON.stringify(text)}`);
        console.log(`     language status: ${text.replace(/\s+/g, ' ').slice(0, 160)}`);
        await settled();
        await screenshot('first-hour-language-status');
        await pointerAway();
      },
    );

    await step(
      'first hour: Convert to API Format of a Stable Diffusion UI workflow on the Local emulator blames its demo nodes in one sentence, with the ways out',
      async () => {
        await clearNotifications();
        await palette('View: Close All Editors');
        fs.copyFileSync(
          path.join(fixtures, 'convert', 'ex-embedding_example', 'workflow.json'),
          path.join(ws, 'sd-ui.json'),
        );
        await openFile('sd-ui.json');
        await palette('Comfy Cloud: Convert to API Format');
        const refusal = toast('defines only its demo nodes').first();
        await refusal.waitFor();
        const text = await refusal.innerText();
        if (!/comfyCloud\.nodeDefinitionsUrl/.test(text) || /Install the custom node/.test(text))
          throw new Error(`the refusal: ${JSON.stringify(text)}`);
        await pointerAway();
        await screenshot('first-hour-convert-on-emulator');
      },
    );

    await step(
      'first hour: Run with Variations on a UI-format file offers "Convert and Run with Variations", which asks the input to vary on the converted graph',
      async () => {
        await clearNotifications();
        await palette('View: Close All Editors');
        await openFile('ui-convert.json');
        await palette('Comfy Cloud: Run with Variations…');
        const offer = toast('variations run on API format').first();
        await offer.waitFor();
        await pointerAway();
        await screenshot('first-hour-variations-ui-offer');
        await offer.getByRole('button', { name: 'Convert and Run with Variations' }).click();
        // The input to vary, asked on the API graph (its nodes' literal inputs).
        await page.locator('.quick-input-list .monaco-list-row', { hasText: 'EmptyImage' }).first().waitFor();
        await settled();
        await screenshot('first-hour-variations-ui-input');
        await page.keyboard.press('Escape');
        await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
      },
    );

    await step('first hour: Comfy Cloud: Show Jobs shows and focuses the Jobs view', async () => {
      await clearNotifications();
      await palette('View: Close All Editors');
      await palette('View: Close Primary Side Bar');
      await palette('Comfy Cloud: Show Jobs');
      const tree = page.locator('.part.sidebar .pane', { hasText: 'Jobs' }).first();
      await tree.waitFor();
      await until('the Jobs view has the focus', () =>
        page.evaluate(() => Boolean(document.activeElement?.closest('.part.sidebar'))),
      );
      await pointerAway();
      await screenshot('first-hour-show-jobs');
    });

    await step(
      'Local emulator: Stop Local Emulator stops it; the status bar says stopped and the menu offers to start it',
      async () => {
        await clearNotifications();
        const url = localUrl();
        await palette('Comfy Cloud: Stop Local Emulator');
        started = false;
        await connectionItem('Local emulator (stopped)').waitFor();
        const refused = await fetch(`${url}/api/v2/health`).then(
          () => false,
          () => true,
        );
        if (!refused) throw new Error(`the emulator at ${url} still answers`);
        const row = await menuRow('local-emulator-menu-stopped');
        if (!row.includes('not running')) throw new Error(`the menu row: ${JSON.stringify(row)}`);
        await pointerAway();
      },
    );
  } finally {
    if (started) await palette('Comfy Cloud: Stop Local Emulator').catch(() => {});
    if (savedSettings === undefined) fs.rmSync(machineSettings, { force: true });
    else fs.writeFileSync(machineSettings, savedSettings);
    await palette('View: Close All Editors').catch(() => {});
  }
}
