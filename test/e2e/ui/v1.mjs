// UI suite, a v1 connection: the deprecation is said once (a notification) and in the status bar; a job submitted
// on it is followed in the monitor with a live preview from the WebSocket's binary frames, then its output
// The connection points at the emulator directly (the recording proxy does not pass WebSocket upgrades); the settings
// are put back as found at the end.
import fs from 'node:fs';
import path from 'node:path';
import {
  emu,
  machineSettings,
  ws,
  page,
  screenshot,
  step,
  toast,
  until,
  pointerAway,
  writeSettings,
} from './harness.mjs';
import { palette, clearNotifications, invertChain, openFile, showComfySidebar, webviewPage } from './helpers.mjs';

/** The steps of the v1 connection, in order. */
export async function v1Steps() {
  const savedSettings = fs.existsSync(machineSettings) ? fs.readFileSync(machineSettings, 'utf8') : undefined;
  const V1_NAME = 'Engine (v1)';
  const monitor = webviewPage;
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
