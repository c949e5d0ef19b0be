// UI suite, the Jobs view: a job's children (its output and read-only workflow); live, a submitted job appears, moves
// to succeeded without any refresh action, and shows its output child; clicking the output opens the PNG; Cancel from
// the tree ends a running emulator job as canceled; a job the server lost; a server away then back.
import fs from 'node:fs';
import path from 'node:path';
import { emu, ws, page, screenshot, step, until, pointerAway } from './harness.mjs';
import { chooseMenuEntry, palette, clearNotifications, loadedImage, invertChain, openFile } from './helpers.mjs';

/** The steps of the Jobs view, in order: a job's children, then the live view. */
export async function jobsViewSteps() {
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
