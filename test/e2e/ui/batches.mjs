// UI suite, batches: Run with Variations, the batch in the Jobs view, the contact sheet
import fs from 'node:fs';
import path from 'node:path';
import { emu, ws, page, screenshot, step, until, pointerAway } from './harness.mjs';
import {
  palette,
  paletteAsking,
  gotoLineEnd,
  clearNotifications,
  openFile,
  onlyViews,
  showComfySidebar,
  webviewPage,
} from './helpers.mjs';

/** The steps of batches, in order. */
export async function batchSteps() {
  /** The contact sheet's page (the last webview: every other editor is closed first). */
  const sheetFrame = webviewPage;
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
    'batch: the Jobs view shows the batch as one item "6 succeeded" with its six jobs beneath, labelled by their values',
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
    const item = page.locator('.pane-body .monaco-list-row[aria-label^="batch, invert.json, 6 succeeded"]').first();
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

  await step('batch: a window reload brings the contact sheet back, filled with its images', async () => {
    // The sheet of the step before is open: the only editor left besides the batch file.
    await page.locator('.tabs-container .tab', { hasText: 'Contact Sheet: invert.json' }).first().waitFor();
    await palette('Developer: Reload Window');
    await page.locator('.monaco-workbench').waitFor({ timeout: 90000 });
    await page.locator('.tabs-container .tab', { hasText: 'Contact Sheet: invert.json' }).first().click();
    await sheetDone(6, 'grid');
    await pointerAway(600, 700);
    await screenshot('batch-contact-sheet-restored');
  });
}
