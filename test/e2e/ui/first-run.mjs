// UI suite, first-run guidance and connections (welcome view, status bar switch, walkthrough)
// It points the machine settings at a cloud connection without a key, then puts them back exactly as found, so the
// areas after it see the settings of the areas before.
import fs from 'node:fs';
import { machineSettings, page, screenshot, step, settled, pointerAway, writeSettings } from './harness.mjs';
import { palette, openWalkthrough, clearNotifications } from './helpers.mjs';

/** The steps of the first-run guidance and the connection switch, in order. */
export async function firstRunSteps() {
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
      'the Jobs view shows the welcome when no connection is usable: Start Local Emulator and Open a Sample Workflow first, every button visible in a 900-pixel-high window (none cut by the Assets and Models views)',
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
        // The two that need no account come first; every button shows without scrolling: the element at each button's
        // centre is the button itself (not the pane below, not nothing: a button cut by the pane's bottom fails).
        const names = await welcome.getByRole('button').allInnerTexts();
        if (names[0] !== 'Start Local Emulator' || names[1] !== 'Open a Sample Workflow')
          throw new Error(`the welcome's buttons in order: ${JSON.stringify(names)}`);
        for (const name of ['Start Local Emulator', 'Open a Sample Workflow', 'Add Connection', 'Set API Key']) {
          const shown = await welcome.getByRole('button', { name }).evaluate((el) => {
            const r = el.getBoundingClientRect();
            // Its centre and its bottom edge: half a button hidden under the pane below fails too.
            const at = (y) => {
              const hit = el.ownerDocument.elementFromPoint(r.x + r.width / 2, y);
              return hit !== null && el.contains(hit);
            };
            return (
              r.height > 0 &&
              r.bottom <= el.ownerDocument.defaultView.innerHeight &&
              at(r.y + r.height / 2) &&
              at(r.bottom - 2)
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
      'clicking the status bar item opens its quick pick with the active connection highlighted, and choosing another connection switches to it',
      async () => {
        await connectionItem('Cloud without key').click();
        const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Default' }).first();
        await row.waitFor();
        await settled(); // the quick pick's fade-in
        // Highlighted (what Enter picks): the active connection, not the first one listed.
        const highlighted = await page.locator('.quick-input-list .monaco-list-row.focused').first().innerText();
        if (!highlighted.includes('Cloud without key'))
          throw new Error(`the quick pick highlights ${JSON.stringify(highlighted)}, not the active connection`);
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
