// UI suite, workflow IntelliSense: "Refresh Node Definitions" fetches the engine's node definitions; in a
// *.api.json file completion offers the classes (with their display names) at "class_type" and a combo input's
// choices; a link-type mismatch is in Problems with source Comfy Cloud, on its line
import fs from 'node:fs';
import path from 'node:path';
import { emu, ws, page, screenshot, step, pointerAway } from './harness.mjs';
import {
  palette,
  editor,
  suggest,
  gotoLineEnd,
  suggestions,
  acceptSuggestion,
  clearNotifications,
  openFile,
} from './helpers.mjs';

/** The steps of workflow IntelliSense, in order. */
export async function intellisenseSteps() {
  const name = 'flow.api.json';
  // Line 4: node 2's empty class_type; line 7: its empty combo "crop"; line 12: an IMAGE output linked into an INT.
  const FLOW = `{
  "1": { "class_type": "EmptyImage", "inputs": { "width": 64, "height": 64, "batch_size": 1, "color": 0 } },
  "2": {
    "class_type": "",
    "inputs": {
      "image": ["1", 0], "width": 32, "height": 32, "upscale_method": "nearest-exact",
      "crop": ""
    }
  },
  "3": { "class_type": "SaveImage", "inputs": { "images": ["2", 0], "filename_prefix": "flow" } },
  "4": { "class_type": "ImageInvert", "inputs": { "image": ["1", 0] } },
  "5": { "class_type": "EmptyImage", "inputs": { "width": ["4", 0], "height": 64, "batch_size": 1, "color": 0 } }
}
`;

  await step(
    'workflow IntelliSense: "Refresh Node Definitions", then completion at "class_type" in a *.api.json lists the engine\'s classes',
    async () => {
      await clearNotifications();
      await palette('View: Close All Editors');
      fs.writeFileSync(path.join(ws, name), FLOW);
      const from = emu.requests.length;
      await palette('Comfy Cloud: Refresh Node Definitions');
      await openFile(name);
      await gotoLineEnd(4, 2);
      // The classes are offered only once the definitions are known: then the command has fetched them.
      const labels = await suggestions('EmptyImage');
      if (!emu.requests.slice(from).some((r) => r.method === 'GET' && /\/api\/object_info$/.test(r.url.split('?')[0])))
        throw new Error('no GET /api/object_info reached the emulator');
      console.log(`     completion: ${JSON.stringify(labels)}`);
      for (const c of ['EmptyImage', 'ImageScale', 'SaveImage', 'LoadImage']) {
        if (!labels.some((l) => l.includes(c)))
          throw new Error(`completion does not offer ${c}: ${JSON.stringify(labels)}`);
      }
      // ImageScale focused: its details give the display name and category, the description and the outputs.
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('ArrowDown');
      await suggest.locator('.monaco-list-row.focused', { hasText: 'ImageScale' }).waitFor();
      const details = page.locator('.suggest-details', { hasText: 'Upscale Image' }).first();
      // Control+Space toggles the details: pressed only when the widget says they are off (their text may come later).
      if (!(await suggest.evaluate((el) => el.classList.contains('shows-details'))))
        await page.keyboard.press('Control+Space');
      await details.waitFor();
      console.log(`     details: ${(await details.innerText()).replace(/\s+/g, ' ').slice(0, 200)}`);
      await screenshot('workflow-class-type-completion');
      // Take ImageScale (filtered by typing, as a person would).
      await acceptSuggestion('ImageSc', 'ImageScale');
      await editor().locator('.view-lines', { hasText: '"class_type": "ImageScale"' }).waitFor();
    },
  );

  await step('workflow IntelliSense: completion in ImageScale\'s combo input "crop" offers its choices', async () => {
    await gotoLineEnd(7, 1);
    const labels = await suggestions('disabled');
    console.log(`     completion: ${JSON.stringify(labels)}`);
    if (!labels.some((l) => l.includes('center')))
      throw new Error(`completion does not offer center: ${JSON.stringify(labels)}`);
    if (labels.some((l) => l.includes('EmptyImage')))
      throw new Error(`node classes offered as a crop value: ${JSON.stringify(labels)}`);
    await screenshot('workflow-enum-completion');
    await acceptSuggestion('cent', 'center');
    await editor().locator('.view-lines', { hasText: '"crop": "center"' }).waitFor();
  });

  await step(
    'workflow IntelliSense: a link from an IMAGE output into an INT input is in Problems, source Comfy Cloud, on its line',
    async () => {
      await palette('View: Focus Problems');
      const row = page
        .locator('.markers-panel .monaco-list-row', { hasText: /Comfy Cloud/ })
        .filter({ hasText: /IMAGE/ })
        .first();
      await row.waitFor();
      const text = (await row.innerText()).replace(/\s+/g, ' ');
      console.log(`     Problems: ${text}`);
      if (!/INT/.test(text)) throw new Error(`the entry does not name the input's type: ${text}`);
      if (!/\[Ln 12, Col \d+\]/.test(text)) throw new Error(`the entry is not on line 12: ${text}`);
      // Node 2 is complete now (ImageScale, crop "center"): the mismatch is the file's one Comfy Cloud entry.
      const all = (
        await page.locator('.markers-panel .monaco-list-row', { hasText: /Comfy Cloud/ }).allInnerTexts()
      ).map((r) => r.replace(/\s+/g, ' '));
      if (all.length !== 1) throw new Error(`expected one Comfy Cloud entry: ${JSON.stringify(all)}`);
      await pointerAway(600, 300);
      await screenshot('workflow-link-type-problem');
      await palette('View: Hide Panel').catch(() => page.keyboard.press('Escape'));
    },
  );
}
