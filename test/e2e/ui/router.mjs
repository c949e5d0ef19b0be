// UI suite, the model router: "Set Router Key" asks for the key; the Models view lists providers and models;
// "New Model Input" opens a prefilled input whose schema completes fields and flags a bad value; Run Model opens the
// native output; a 422 lands in Problems on the field's line
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
  settled,
  pointerAway,
  writeSettings,
} from './harness.mjs';
import {
  chooseMenuEntry,
  palette,
  paletteAsking,
  editor,
  suggest,
  gotoLineEnd,
  suggestions,
  acceptSuggestion,
  clearNotifications,
  openFile,
  onlyViews,
} from './helpers.mjs';

/** The steps of the model router, in order. */
export async function routerSteps() {
  const routerRequests = (from) => emu.requests.slice(from).filter((r) => r.url.startsWith('/router/'));
  /** Runs a palette command that asks through an input box, then answers it with `value`. */
  async function paletteWithInput(command, prompt, value) {
    await paletteAsking(command, prompt);
    const input = page.locator('.quick-input-widget input');
    await input.fill(value);
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
  }
  /** The Models view's row whose label is exactly `label` (a provider or a model). */
  const modelRow = (label) =>
    page
      .locator('.pane-body .monaco-list-row')
      .filter({
        has: page.locator('.label-name', {
          hasText: new RegExp(`^\\s*${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`),
        }),
      })
      .first();
  /** "New Model Input" from the context menu of the model `id` in the Models view. */
  async function newModelInput(id) {
    const [provider, model] = id.split('/');
    await palette('Comfy Cloud: Focus on Models View');
    const providerRow = modelRow(provider);
    await providerRow.waitFor();
    if ((await providerRow.getAttribute('aria-expanded')) !== 'true') await providerRow.click();
    const row = modelRow(model);
    await row.waitFor();
    await row.click({ button: 'right' });
    const item = page.locator('.monaco-menu .action-item', { hasText: 'New Model Input' }).first();
    await item.waitFor();
    await chooseMenuEntry(item);
    await page.locator('.tabs-container .tab.active', { hasText: /Untitled/ }).waitFor();
    await editor()
      .locator('.view-lines', { hasText: `comfy-router-schema:/${id}.json` })
      .waitFor();
    return row;
  }

  await step(
    'Models view: "Set Router Key" takes the key, then the view lists the catalog\'s providers and a provider\'s models',
    async () => {
      await clearNotifications();
      await palette('View: Close All Editors');
      await writeSettings(machineSettings, { 'comfyCloud.routerUrl': emu.routerUrl });
      await palette('Comfy Cloud: Focus on Models View');
      await page.locator('.welcome-view-content', { hasText: 'No model router is connected' }).waitFor();
      // Jobs and Assets collapsed: the Models view gets the sidebar's height.
      await onlyViews('Models');
      const from = emu.requests.length;
      await paletteWithInput('Comfy Cloud: Set Router Key', 'Model Router Key', 'test-router-key');
      const provider = modelRow('emulator');
      await provider.waitFor();
      if ((await provider.getAttribute('aria-expanded')) !== 'true') await provider.click();
      await modelRow('strict').waitFor();
      const pages = routerRequests(from).filter((r) => /^\/router\/v1\/models(\?|$)/.test(r.url));
      console.log(
        `     catalog requests: ${pages.length} (${pages
          .map((r) => r.url.replace(/^\/router\/v1\/models/, ''))
          .slice(0, 4)
          .join(' ')} …)`,
      );
      if (pages.length < 2) throw new Error(`the catalog was not paged: ${JSON.stringify(pages)}`);
      const providers = await page.locator('.pane-body .monaco-list-row', { hasText: /\d+ models?\s*$/ }).count();
      if (providers < 2) throw new Error(`only ${providers} provider(s) listed`);
      // Its tooltip in the picture too, when the hover shows in time (for the picture only).
      await modelRow('strict').hover();
      await page
        .locator('.monaco-hover, .custom-hover, .workbench-hover')
        .first()
        .waitFor({ timeout: 10000 })
        .catch(() => {});
      await settled();
      await screenshot('models-view');
      await pointerAway(700, 300);
    },
  );

  await step(
    "New Model Input on emulator/strict: a prefilled input; completion offers the schema's fields; an out-of-range value gets a squiggle",
    async () => {
      await newModelInput('emulator/strict');
      const text = await editor().locator('.view-lines').innerText();
      if (!/"steps":\s*20/.test(text)) throw new Error(`the input is not prefilled with steps' default: ${text}`);
      // "steps" is the last field of the prefill: make it 500 (the schema allows 1 to 50).
      const lines = text.split('\n');
      const stepsLine = lines.findIndex((l) => /"steps"/.test(l)) + 1;
      await gotoLineEnd(stepsLine);
      await page.keyboard.press('Backspace');
      await page.keyboard.press('Backspace');
      await page.keyboard.type('500');
      await editor().locator('.squiggly-warning, .squiggly-error').first().waitFor();
      // A new field after it: completion lists the schema's other fields.
      await page.keyboard.type(',');
      await page.keyboard.press('Enter');
      const labels = await suggestions('sampler');
      console.log(`     completion: ${JSON.stringify(labels)}`);
      for (const field of ['negative_prompt', 'guidance', 'sampler', 'seed']) {
        if (!labels.some((l) => l.includes(field)))
          throw new Error(`completion does not offer ${field}: ${JSON.stringify(labels)}`);
      }
      await screenshot('model-input-completion');
      // Accept "sampler" (filtered by typing, as a person would): the service inserts it with its default, so the
      // input is valid JSON again, with steps still 500.
      await acceptSuggestion('samp', 'sampler');
      // The service then offers the field's values (its enum): the focused one is taken.
      await suggest.locator('.monaco-list-row', { hasText: 'euler_a' }).waitFor();
      await page.keyboard.press('Enter');
      await page.keyboard.press('Escape');
      await editor()
        .locator('.view-lines', { hasText: /"sampler":\s"\w+"/ })
        .waitFor();
      // (The rendered lines' DOM order need not be the text's: checked line by line, not parsed.)
      const after = (await editor().locator('.view-lines').innerText()).replace(/\u00a0/g, ' ');
      if (!/"steps": 500,/.test(after) || !/"sampler": "\w+"\s*$/m.test(after))
        throw new Error(`unexpected input after accepting the completion: ${after}`);
    },
  );

  await step(
    'Run Model on that input: the 422 lands in Problems at the "steps" line, with the request id in the message',
    async () => {
      await clearNotifications();
      const from = emu.requests.length;
      await page.locator('.editor-actions .action-label[aria-label^="Run Model"]').first().click();
      const failed = toast(/refused the input/);
      await failed.waitFor();
      const said = await failed.innerText();
      if (!/request /.test(said)) throw new Error(`the message does not name the request id: ${said}`);
      const posts = routerRequests(from).filter((r) => r.method === 'POST');
      if (posts.length !== 1) throw new Error(`expected one POST to the router, saw ${JSON.stringify(posts)}`);
      await palette('View: Focus Problems');
      const row = page
        .locator('.markers-panel .monaco-list-row', { hasText: /Comfy Cloud/ })
        .filter({ hasText: /steps/ })
        .first();
      await row.waitFor();
      const text = (await row.innerText()).replace(/\s+/g, ' ');
      console.log(`     Problems: ${text}`);
      const stepsLine =
        (await editor().locator('.view-lines').innerText()).split('\n').findIndex((l) => /"steps"/.test(l)) + 1;
      if (!new RegExp(`\\[Ln ${stepsLine}, Col \\d+\\]`).test(text))
        throw new Error(`the entry is not on line ${stepsLine}: ${text}`);
      await pointerAway(600, 300);
      await screenshot('model-422-problems');
      await palette('View: Hide Panel').catch(() => page.keyboard.press('Escape'));
    },
  );

  await step(
    'Run Model on emulator/echo (editor title button): the native output opens as JSON beside the input',
    async () => {
      await clearNotifications();
      // The strict input is an untitled document with changes: closed without saving (no dialog).
      await palette('View: Revert and Close Editor');
      await palette('View: Close All Editors');
      await newModelInput('emulator/echo');
      // A field after $schema, typed as a person would (the editor closes the quotes as they are typed).
      await gotoLineEnd(2);
      await page.keyboard.type(',');
      await page.keyboard.press('Enter');
      await page.keyboard.type('"prompt": "a red fox"');
      await editor().locator('.view-lines', { hasText: '"prompt": "a red fox"' }).waitFor();
      const from = emu.requests.length;
      await page.locator('.editor-actions .action-label[aria-label^="Run Model"]').first().click();
      // The output opens beside the input, in a second editor group: echo answers the input without its $schema.
      const output = page.locator('.editor-group-container').nth(1).locator('.view-lines');
      await output.filter({ hasText: 'a red fox' }).first().waitFor();
      if (/comfy-router-schema/.test(await output.first().innerText())) throw new Error('the $schema key was sent');
      await toast(/Running emulator\/echo/).waitFor({ state: 'hidden' });
      const posts = routerRequests(from).filter((r) => r.method === 'POST');
      console.log(`     ${posts.map((r) => `${r.method} ${r.url} → ${r.status}`).join(', ')}`);
      if (posts.length !== 1 || posts[0].status !== 200)
        throw new Error(`expected one POST answered 200: ${JSON.stringify(posts)}`);
      await pointerAway();
      await screenshot('model-output');
    },
  );

  await step(
    'a model input open when the window loads still validates: the comfy-router-schema scheme activates the extension',
    async () => {
      // The two untitled editors (input and output) closed without saving, so the reload restores only the file.
      for (let i = 0; i < 2; i++)
        await palette('View: Revert and Close Editor').catch(() => page.keyboard.press('Escape'));
      await palette('View: Close All Editors');
      const name = 'model-input.json';
      fs.writeFileSync(
        path.join(ws, name),
        '{\n  "$schema": "comfy-router-schema:/emulator/strict.json",\n  "prompt": "a cat",\n  "steps": 500\n}\n',
      );
      await openFile(name);
      // The Explorer shows, not the Comfy Cloud sidebar: after the reload nothing but the schema's scheme activates it.
      await palette('Developer: Reload Window');
      await page.locator('.monaco-workbench').waitFor({ timeout: 90000 });
      await page.locator('.tabs-container .tab.active', { hasText: name }).waitFor();
      await palette('View: Focus Problems');
      const row = page
        .locator('.markers-panel .monaco-list-row', { hasText: 'Value is above the maximum of 50' })
        .first();
      await row.waitFor();
      const unresolved = await page
        .locator('.markers-panel .monaco-list-row', { hasText: /Unable to load schema|can not be resolved/i })
        .count();
      if (unresolved) throw new Error("the JSON language service could not load the model's schema");
      console.log(`     Problems: ${(await row.innerText()).replace(/\s+/g, ' ')}`);
      await pointerAway(600, 300);
      await screenshot('model-input-after-reload');
      await palette('View: Hide Panel').catch(() => page.keyboard.press('Escape'));
    },
  );
}
