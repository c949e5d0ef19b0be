// UI suite, a ComfyUI server as the connection: the status bar names it; a job submitted on it is followed in the
// monitor (node progress, the graph's live node states); Cancel in the monitor interrupts it (canceled); the Jobs view
// lists a prompt another client put in the server's queue. The server is the emulator's ComfyUI routes (`/comfyui`,
// answering as a real ComfyUI does), or a real ComfyUI when COMFYUI_URL names one (then long workflows stand in for
// the emulator's node holds: nothing here waits on time, only on what the page shows). Settings are put back at the end.
import fs from 'node:fs';
/* global fetch -- Node's */
import path from 'node:path';
import extractChunks from 'png-chunks-extract';
import pngText from 'png-chunk-text';
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
import { palette, clearNotifications, invertChain, openFile, showComfySidebar } from './helpers.mjs';
import { monitor } from './monitor.mjs';

const REAL = process.env.COMFYUI_URL?.replace(/\/+$/, '');

/** A workflow that runs long on a real ComfyUI on CPU (a large image blurred again and again), short elsewhere. */
function chain(prefix, color) {
  if (!REAL) return invertChain(6, prefix, color);
  const workflow = { 1: { class_type: 'EmptyImage', inputs: { width: 1024, height: 1024, batch_size: 1, color } } };
  for (let i = 2; i <= 9; i++)
    workflow[i] = { class_type: 'ImageBlur', inputs: { image: [String(i - 1), 0], blur_radius: 6, sigma: 2 } };
  workflow[10] = { class_type: 'SaveImage', inputs: { images: ['9', 0], filename_prefix: prefix } };
  return workflow;
}

/** The steps of a ComfyUI server connection, in order. */
export async function comfyuiSteps() {
  const savedSettings = fs.existsSync(machineSettings) ? fs.readFileSync(machineSettings, 'utf8') : undefined;
  const NAME = 'ComfyUI';
  const server = REAL ?? `${new URL(emu.emulatorUrl).origin}/comfyui`;
  const graphStates = () =>
    monitor()
      .locator('section.graph g.graph-node')
      .evaluateAll((gs) =>
        Object.fromEntries(
          gs.map((g) => [
            g.getAttribute('data-id'),
            (/\bstate-(\w+)/.exec(g.getAttribute('class') ?? '') ?? [])[1] ?? 'none',
          ]),
        ),
      );
  /** Submits `file` from the palette; resolves with the job id once its monitor tab shows (`<file> · <id8>`). */
  const submitAndOpen = async (file) => {
    await openFile(file);
    await palette('Comfy Cloud: Submit Workflow');
    const tab = page.locator('.tabs-container .tab', { hasText: `${file} · ` }).first();
    await tab.waitFor();
    return tab;
  };
  try {
    await step(
      "comfyui: on a ComfyUI server connection a job is followed in the monitor: its node progress, the graph's live node states, the Jobs view row",
      async () => {
        await clearNotifications();
        await palette('View: Close All Editors');
        await writeSettings(machineSettings, {
          'comfyCloud.connections': [{ name: NAME, surface: 'companion', baseUrl: server, api: 'comfyui' }],
          'comfyCloud.activeConnection': NAME,
          'comfyCloud.openMonitorOnSubmit': true,
        });
        await showComfySidebar();
        const item = page.locator('.statusbar-item', { hasText: NAME }).first();
        await item.waitFor();
        console.log(`     status bar: ${await item.locator('a').first().getAttribute('aria-label')}`);
        fs.writeFileSync(
          path.join(ws, 'comfyui-chain.json'),
          JSON.stringify(chain('comfyui-chain', 0xff8800), null, 2),
        );
        if (!REAL) await emu.holdNodes({ nodeIds: ['4'] });
        try {
          await submitAndOpen('comfyui-chain.json');
          const held = REAL ? undefined : await emu.heldAt(undefined, 3);
          await monitor()
            .locator('vscode-badge.status', { hasText: /running/i })
            .waitFor();
          // Some nodes done and one running: the graph follows the server's executing messages.
          const states = await until('a node done and one running in the graph', async () => {
            const st = await graphStates();
            const values = Object.values(st);
            return values.includes('done') && values.includes('running') ? st : undefined;
          });
          const percent = (await monitor().locator('section.progress .percent').textContent())?.trim();
          console.log(`     graph: ${JSON.stringify(states)}; progress ${percent}`);
          await monitor().locator('section.graph').scrollIntoViewIfNeeded();
          await pointerAway();
          await screenshot('comfyui-monitor-running');
          await palette('Comfy Cloud: Focus on Jobs View');
          // Held by the emulator it is running; a real server's job may have ended by now.
          const row = page.locator(`.pane-body .monaco-list-row${REAL ? '' : '[aria-label*="running"]'}`, {
            hasText: 'comfyui-chain.json',
          });
          await row.first().waitFor();
          console.log(`     Jobs view: ${await row.first().getAttribute('aria-label')}`);
          await pointerAway();
          await screenshot('comfyui-jobs-view-running');
          if (held) await emu.releaseNodes(held.jobId);
        } finally {
          if (!REAL) await emu.clearHolds();
        }
        await monitor()
          .locator('vscode-badge.status', { hasText: /succeeded/i })
          .waitFor({ timeout: 300_000 });
        await monitor().locator('.gallery img.thumb').first().waitFor();
        await pointerAway();
        await screenshot('comfyui-monitor-succeeded');
      },
    );

    await step(
      "comfyui: the same workflow again is answered from the server's cache: it succeeds with its output, and the monitor's graph shows its nodes cached",
      async () => {
        await clearNotifications();
        await palette('View: Close All Editors');
        await submitAndOpen('comfyui-chain.json');
        await monitor()
          .locator('vscode-badge.status', { hasText: /succeeded/i })
          .waitFor({ timeout: 300_000 });
        await monitor().locator('.gallery img.thumb').first().waitFor();
        const states = await until('every node of the cached run shown cached', async () => {
          const st = await graphStates();
          const values = Object.values(st);
          return values.length > 0 && values.every((v) => v === 'cached') ? st : undefined;
        });
        console.log(`     graph: ${JSON.stringify(states)}`);
        await monitor().locator('section.graph').scrollIntoViewIfNeeded();
        await pointerAway();
        await screenshot('comfyui-monitor-cached');
      },
    );

    await step('comfyui: Cancel in the monitor interrupts the running job, which ends canceled', async () => {
      await clearNotifications();
      await palette('View: Close All Editors');
      fs.writeFileSync(
        path.join(ws, 'comfyui-cancel.json'),
        JSON.stringify(chain('comfyui-cancel', 0x0088ff), null, 2),
      );
      if (!REAL) await emu.holdNodes({ nodeIds: ['3'] });
      try {
        await submitAndOpen('comfyui-cancel.json');
        await monitor()
          .locator('vscode-badge.status', { hasText: /running/i })
          .waitFor();
        if (!REAL) await emu.heldAt(undefined, 2);
        const cancel = monitor().locator('.actions vscode-button', { hasText: 'Cancel' }).first();
        await cancel.waitFor();
        await cancel.click();
        await monitor()
          .locator('vscode-badge.status', { hasText: /canceled/i })
          .waitFor({ timeout: 300_000 });
      } finally {
        if (!REAL) await emu.clearHolds();
      }
      console.log(`     graph after cancel: ${JSON.stringify(await graphStates())}`);
      await pointerAway();
      await screenshot('comfyui-monitor-canceled');
    });

    await step(
      "comfyui: Convert and Submit converts a UI-format file with the server's node definitions, and the saved PNG carries the UI workflow as ComfyUI's frontend makes it",
      async () => {
        await clearNotifications();
        await palette('View: Close All Editors');
        const since = Date.now();
        await openFile('ui-convert.json');
        await palette('Comfy Cloud: Submit Workflow');
        const offer = toast(/UI-format workflow/);
        await offer.getByRole('button', { name: 'Convert and Submit' }).click();
        await monitor()
          .locator('vscode-badge.status', { hasText: /succeeded/i })
          .waitFor({ timeout: 300_000 });
        await monitor().locator('.gallery img.thumb').first().waitFor();
        const outputs = path.join(ws, '.comfy', 'outputs');
        const saved = await until('the output PNG saved under .comfy/outputs', () =>
          fs
            .readdirSync(outputs, { recursive: true })
            .map((f) => path.join(outputs, String(f)))
            .find((f) => /converted_\d+_\.png$/.test(f) && fs.statSync(f).mtimeMs >= since),
        );
        const chunks = Object.fromEntries(
          extractChunks(fs.readFileSync(saved))
            .filter((c) => c.name === 'tEXt')
            .map((c) => pngText.decode(c.data))
            .map(({ keyword, text }) => [keyword, JSON.parse(text)]),
        );
        const ui = JSON.parse(fs.readFileSync(path.join(ws, 'ui-convert.json'), 'utf8'));
        console.log(`     ${path.basename(saved)}: chunks ${Object.keys(chunks).join(', ')}`);
        if (JSON.stringify(chunks.workflow) !== JSON.stringify(ui))
          throw new Error(
            `the PNG's workflow chunk is not ui-convert.json: ${JSON.stringify(chunks.workflow)?.slice(0, 200)}`,
          );
        if (!chunks.prompt) throw new Error('the PNG has no prompt chunk');
        await pointerAway();
        await screenshot('comfyui-convert-and-submit');
      },
    );

    await step("comfyui: the Jobs view lists a prompt another client put in the server's queue", async () => {
      await clearNotifications();
      await palette('View: Close All Editors');
      if (!REAL) await emu.holdNodes({ nodeIds: ['1'] });
      let promptId;
      try {
        const res = await fetch(`${server}/prompt`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ prompt: chain('other-client', 0x33aa33) }),
        });
        promptId = (await res.json()).prompt_id;
        if (!promptId) throw new Error(`POST /prompt answered ${res.status} without a prompt_id`);
        await palette('Comfy Cloud: Focus on Jobs View');
        await palette('Comfy Cloud: Refresh Jobs');
        const row = page.locator('.pane-body .monaco-list-row', { hasText: promptId.slice(0, 8) }).first();
        await row.waitFor();
        console.log(`     row: ${await row.getAttribute('aria-label')}`);
        await pointerAway();
        await screenshot('comfyui-jobs-view-queue');
      } finally {
        if (promptId)
          await fetch(`${server}/interrupt`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ prompt_id: promptId }),
          }).catch(() => undefined);
        if (!REAL) await emu.clearHolds();
      }
    });
  } finally {
    if (savedSettings === undefined) fs.rmSync(machineSettings, { force: true });
    else fs.writeFileSync(machineSettings, savedSettings);
  }
}
