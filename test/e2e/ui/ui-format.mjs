// UI suite, UI-format workflows and ComfyUI images: the CodeLens "Convert to API Format" on a UI-format file opens the API
// graph beside it; Submit Workflow on it offers "Convert and Submit", which ends in a succeeded monitor; "Open
// Workflow from Image" on that job's output opens the graph that made it; "Run Again from Image" asks first, naming
// the image and the connection. Every untitled document is closed unsaved (no "save changes?" dialog left behind).
import { emu, machineSettings, page, screenshot, step, toast, until, pointerAway, writeSettings } from './harness.mjs';
import {
  chooseMenuEntry,
  palette,
  clearNotifications,
  submittedJobId,
  loadedImage,
  openFile,
  showComfySidebar,
  webviewPage,
} from './helpers.mjs';

/** The steps of UI-format workflows and ComfyUI images, in order. */
export async function uiFormatSteps() {
  const monitor = webviewPage;
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
