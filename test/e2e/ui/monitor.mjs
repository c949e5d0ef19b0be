// UI suite, the job monitor: opened on submit, it shows the progress bar moving, a live preview, then the output
// thumbnail; Cancel in it ends a running job as canceled; a failing workflow shows the error with its node and "Go to
// node" selects that node's key in the file; a window reload restores it; no CSP violation in the console
import fs from 'node:fs';
import path from 'node:path';
import {
  emu,
  machineSettings,
  ws,
  page,
  screenshot,
  step,
  toasts,
  toast,
  until,
  pointerAway,
  writeSettings,
} from './harness.mjs';
import {
  palette,
  clearNotifications,
  submittedJobId,
  loadedImage,
  invertChain,
  openFile,
  webviewPage,
} from './helpers.mjs';

/** The monitor's page: the webview's outer iframe, then its content frame (only one webview is open in these steps). */
export const monitor = webviewPage;
/** The editor tab of the monitor of job `jobId` (its title holds the job's short id). */
export const monitorTab = (jobId) => page.locator('.tabs-container .tab', { hasText: jobId.slice(0, 8) }).first();
/** The requests at the emulator since request `from` that name job `jobId` and match `re` (on "METHOD url"). */
export const requestsNaming = (from, jobId, re) =>
  emu.requests
    .slice(from)
    .filter((r) => r.url.includes(`/jobs/${encodeURIComponent(jobId)}`) && re.test(`${r.method} ${r.url}`));

/**
 * The first steps of the job monitor, in order (submit, the README picture, Cancel, a failing workflow). From here on
 * every Content Security Policy violation the console shows is collected. Resolves with what the monitor's later
 * steps read: `jobId`, the job the first step monitored (undefined if it failed), and `cspViolations`.
 */
export async function monitorSteps() {
  const monitored = { jobId: undefined, cspViolations: [] };
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) monitored.cspViolations.push(m.text());
  });

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
        const jobId = (monitored.jobId = first.jobId);
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
      if (!monitored.jobId) throw new Error('no monitored job from the first step');
      await clearNotifications();
      const title = page.locator('.part.sidebar .composite.title', { hasText: 'Comfy Cloud' }).first();
      if (!(await title.isVisible().catch(() => false)))
        await page.locator('.activitybar .action-item a[aria-label^="Comfy Cloud"]').first().click();
      await title.waitFor();
      await page.locator('.part.sidebar .monaco-list-row', { hasText: 'invert.json' }).first().waitFor();
      await monitorTab(monitored.jobId).click();
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
  return monitored;
}
