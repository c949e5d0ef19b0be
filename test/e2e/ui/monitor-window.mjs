// UI suite, the job monitor across the window: a reload restores it and it reads the job again; the keyboard reaches
// its buttons; it follows the color theme; a running job after a reload shows the server's status, a job that ends
// during a reload shows its thumbnail; the walkthrough's first job; no Content Security Policy violation.
import fs from 'node:fs';
import path from 'node:path';
import { emu, machineSettings, ws, page, screenshot, step, until, pointerAway, writeSettings } from './harness.mjs';
import {
  palette,
  pickColorTheme,
  openWalkthrough,
  editor,
  clearNotifications,
  submittedJobId,
  loadedImage,
  invertChain,
  openFile,
} from './helpers.mjs';
import { monitor, monitorTab, requestsNaming } from './monitor.mjs';

/**
 * The monitor's steps across the window, in order: reloads, the keyboard, color themes, the walkthrough's first job, and
 * last no CSP violation. `monitored` is what monitorSteps resolved with.
 */
export async function monitorWindowSteps(monitored) {
  await step('monitor: a window reload restores the monitor, which reads the job again', async () => {
    await palette('View: Close All Editors');
    if (!monitored.jobId) throw new Error('no monitored job from the first step');
    // The command asks for the job id in the same quick input the palette used.
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill('>Comfy Cloud: Open Job Monitor');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Open Job Monitor' }).first().waitFor();
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-widget', { hasText: 'The id of the job to monitor' }).waitFor();
    await input.fill(monitored.jobId);
    await page.keyboard.press('Enter');
    await monitorTab(monitored.jobId).waitFor();
    await monitor()
      .locator('vscode-badge.status', { hasText: /succeeded/i })
      .waitFor();
    const from = emu.requests.length;
    await palette('Developer: Reload Window');
    await page.locator('.monaco-workbench').waitFor({ timeout: 90000 });
    await monitorTab(monitored.jobId).waitFor();
    await monitor()
      .locator('vscode-badge.status', { hasText: /succeeded/i })
      .waitFor();
    await monitor().locator('.gallery img.thumb').first().waitFor();
    const reread = requestsNaming(from, monitored.jobId, /^GET /);
    if (reread.length === 0) throw new Error('the restored monitor did not read the job again');
    await pointerAway();
    await screenshot('monitor-restored');
  });

  await step(
    'monitor: keyboard: Tab moves through its buttons; Enter on "Open Workflow" opens the workflow file',
    async () => {
      if (!monitored.jobId) throw new Error('no monitored job from the first step');
      await monitorTab(monitored.jobId).waitFor();
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
      await monitorTab(monitored.jobId).click();
      await monitor()
        .locator('vscode-badge.status', { hasText: /succeeded/i })
        .waitFor();
    },
  );

  await step(
    "monitor: it follows the color theme (dark, high contrast) through the theme's CSS variables",
    async () => {
      if (!monitored.jobId) throw new Error('no monitored job from the first step');
      await monitorTab(monitored.jobId).waitFor();
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
    if (monitored.cspViolations.length)
      throw new Error(`CSP violations: ${JSON.stringify(monitored.cspViolations.slice(0, 3))}`);
  });
}
