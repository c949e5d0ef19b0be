// UI suite, the node form beside the workflow graph: choosing a node opens its inputs as fields typed from the
// connection's node definitions (the emulator's ImageScale: a combo, integers with their range); a value the definition
// refuses is flagged on its field and the JSON is not touched; a change is one edit of the JSON (exactly the value's
// text), which undo in the editor takes back, the form following. Then a KSampler's form, typed from a recorded
// engine's definitions (served here, named by comfyCloud.nodeDefinitionsUrl): its seed with Randomize, its sampler
// combo open. The file it writes is removed and the settings restored at the end.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ws, page, screenshot, step, until, pointerAway, machineSettings, writeSettings } from './harness.mjs';
import { palette, openFile, webviewPage } from './helpers.mjs';

const FILE = 'form-scale.json';
const WORKFLOW = `{
  "1": { "class_type": "EmptyImage", "inputs": { "width": 64, "height": 64, "batch_size": 1, "color": 0 } },
  "2": {
    "class_type": "ImageScale",
    "inputs": {
      "image": ["1", 0],
      "upscale_method": "nearest-exact",
      "width": 128,
      "height": 96,
      "crop": "disabled"
    },
    "_meta": { "title": "Scale" }
  },
  "3": { "class_type": "SaveImage", "inputs": { "images": ["2", 0], "filename_prefix": "form" } }
}
`;

/** The steps of the node form, in order. */
export async function graphFormSteps() {
  const frame = webviewPage;
  const form = () => frame().locator('aside.graph-form');
  const field = (name) => form().locator(`.graph-form-field[data-field="${name}"]`);
  /** The JSON editor's text as Monaco shows it (its lines joined). */
  const editorText = () =>
    page
      .locator('.editor-instance .monaco-editor .view-lines')
      .first()
      .innerText()
      .then((t) => t.replace(/\u00a0/g, ' '));
  /** Types `value` into the number field `name` and commits it (Enter), as a user does. */
  const typeInto = async (name, value) => {
    const input = field(name).locator('vscode-textfield input');
    await input.click();
    await input.fill(String(value));
    await input.press('Enter');
  };

  await step(
    'graph form: choosing a node opens its typed form; a refused value is flagged and not written; a change is one edit of the JSON that undo takes back',
    async () => {
      fs.writeFileSync(path.join(ws, FILE), WORKFLOW);
      try {
        await palette('View: Close All Editors');
        await openFile(FILE);
        await page
          .locator('.editor-actions .action-item a[aria-label*="Open Workflow Graph to the Side"]')
          .first()
          .click();
        const node = frame().locator('g.graph-node', { hasText: 'Scale' }).first();
        await node.waitFor();
        await node.click();
        await form().waitFor({ state: 'visible' });
        const labels = await form().locator('.graph-form-label').allInnerTexts();
        console.log(`     form fields: ${labels.join(', ')}`);
        for (const name of ['image', 'upscale_method', 'width', 'height', 'crop'])
          if (!labels.includes(name)) throw new Error(`no field ${name} in the form: ${labels.join(', ')}`);
        if ((await field('upscale_method').locator('vscode-single-select').count()) !== 1)
          throw new Error('upscale_method is not a combo');
        if (!/linked from node 1/.test(await field('image').innerText())) throw new Error('the link is not shown');

        // Refused: below the definition's minimum. Flagged on the field; the JSON keeps its value.
        await typeInto('width', -5);
        const problem = field('width').locator('.graph-form-problem');
        await until(
          async () => `the refusal shown: ${await problem.innerText().catch(() => '')}`,
          async () => /below the minimum 0/.test(await problem.innerText().catch(() => '')),
        );
        if (!(await editorText()).includes('"width": 128')) throw new Error('the refused value reached the JSON');
        await pointerAway(600, 700);
        await screenshot('graph-form-refused-value');

        // Taken: the JSON changes at that value only.
        await typeInto('width', 640);
        await until(
          async () => `the JSON edited: ${(await editorText()).slice(0, 400)}`,
          async () => (await editorText()).includes('"width": 640'),
        );
        const text = await editorText();
        if (!text.includes('"height": 96') || !text.includes('"width": 64'))
          throw new Error(`more than the value changed: ${text}`);
        if (await problem.isVisible()) throw new Error('the refusal is still shown after a good value');
        // The chosen node stays in view above its form, the graph laid out as before the edit.
        if (!(await node.isVisible())) throw new Error('the edited node is not in view');
        await pointerAway(600, 700);
        await screenshot('graph-form-after-edit');

        // The combo open, with its choices.
        await field('upscale_method').locator('vscode-single-select').click();
        await until('the combo open', async () =>
          field('upscale_method')
            .locator('vscode-single-select')
            .evaluate((e) => e.hasAttribute('open') || e.open === true)
            .catch(() => false),
        );
        await screenshot('graph-form-combo-open');
        await page.keyboard.press('Escape');

        // Undo in the editor takes the edit back; the form follows.
        // The editor focused on its first line (a click on its text), so the lines read are the ones the edit changed.
        await page.locator('.editor-instance .monaco-editor .view-lines .view-line').first().click();
        await page.keyboard.press('Control+Home');
        await page.keyboard.press('Control+Z');
        await until(
          async () => `undone: ${(await editorText()).slice(0, 400)}`,
          async () => (await editorText()).includes('"width": 128'),
        );
        await until(
          async () =>
            `the form follows the undo: ${await field('width')
              .locator('vscode-textfield')
              .evaluate((e) => e.value)
              .catch(() => '?')}`,
          async () =>
            (await field('width')
              .locator('vscode-textfield')
              .evaluate((e) => e.value)
              .catch(() => '')) === '128',
        );
        await page.keyboard.press('Control+Home');
        await pointerAway(600, 700);
        await screenshot('graph-form-after-undo');
      } finally {
        await palette('File: Revert File').catch(() => {});
        await palette('View: Close All Editors').catch(() => {});
        fs.rmSync(path.join(ws, FILE), { force: true });
      }
    },
  );

  await step(
    "graph form: a KSampler's form, typed from an engine's node definitions: numbers with their ranges, a seed with Randomize, the sampler's combo open",
    async () => {
      const objectInfo = fs.readFileSync(
        path.join(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/object_info/comfy-ts-object_info.json'),
      );
      const server = http.createServer((req, res) => {
        if (!/\/object_info$/.test(req.url ?? '')) return res.writeHead(404).end();
        res.writeHead(200, { 'content-type': 'application/json' }).end(objectInfo);
      });
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      const saved = fs.existsSync(machineSettings) ? fs.readFileSync(machineSettings, 'utf8') : undefined;
      try {
        await writeSettings(machineSettings, {
          'comfyCloud.nodeDefinitionsUrl': `http://127.0.0.1:${server.address().port}`,
        });
        await palette('View: Close All Editors');
        await openFile('stable-diffusion.json');
        await palette('Comfy Cloud: Refresh Node Definitions');
        await page
          .locator('.editor-actions .action-item a[aria-label*="Open Workflow Graph to the Side"]')
          .first()
          .click();
        const node = frame().locator('g.graph-node', { hasText: 'KSampler' }).first();
        await node.waitFor();
        await node.click();
        await until(
          async () =>
            `the KSampler form: ${await form()
              .innerText()
              .catch(() => '')}`,
          async () => (await field('sampler_name').locator('vscode-single-select').count()) === 1,
        );
        const labels = await form().locator('.graph-form-label').allInnerTexts();
        console.log(`     form fields: ${labels.join(', ')}`);
        const steps = field('steps').locator('vscode-textfield');
        const range = await steps.evaluate((e) => `${e.getAttribute('min')}..${e.getAttribute('max')}`);
        console.log(`     steps range: ${range}`);
        if (range !== '1..10000') throw new Error(`steps is not typed from the definition: ${range}`);
        if ((await field('seed').locator('vscode-button', { hasText: 'Randomize' }).count()) !== 1)
          throw new Error('the seed has no Randomize');
        await field('sampler_name').locator('vscode-single-select').click();
        await until('the combo open', async () =>
          field('sampler_name')
            .locator('vscode-single-select')
            .evaluate((e) => e.open === true || e.hasAttribute('open'))
            .catch(() => false),
        );
        await screenshot('graph-form-ksampler-combo-open');
        await page.keyboard.press('Escape');
      } finally {
        if (saved === undefined) fs.rmSync(machineSettings, { force: true });
        else fs.writeFileSync(machineSettings, saved);
        server.close();
        await palette('View: Close All Editors').catch(() => {});
      }
    },
  );
}
