// UI suite, the job monitor's Graph section: node states while a job is held at a node, a failed node with its error
// and "Go to node", a chain that fails at its fourth node.
import fs from 'node:fs';
import path from 'node:path';
import { emu, machineSettings, ws, page, screenshot, step, until, pointerAway, writeSettings } from './harness.mjs';
import { palette, clearNotifications, submittedJobId, openFile } from './helpers.mjs';
import { monitor, monitorTab } from './monitor.mjs';

/** The steps of the monitor's Graph section, in order: a held job's node states, a failed node, a chain failing at its fourth node. */
export async function monitorGraphSteps() {
  /** The monitor's Graph section, scrolled into view, and its node of id `id` (its accessible name ends with `, id`). */
  const graphSection = () => monitor().locator('section.graph');
  const graphNode = (id) => graphSection().locator('g.graph-node[data-id="' + id + '"]');
  const nodeStates = () =>
    graphSection()
      .locator('g.graph-node')
      .evaluateAll((gs) =>
        Object.fromEntries(
          gs.map((g) => [
            g.getAttribute('data-id'),
            (/\bstate-(\w+)/.exec(g.getAttribute('class') ?? '') ?? [])[1] ?? 'none',
          ]),
        ),
      );

  await step(
    "monitor graph: a held job's nodes change state: node 1 done, node 2 running, node 3 waiting, then all done",
    async () => {
      await clearNotifications();
      await palette('View: Close All Editors');
      await writeSettings(machineSettings, { 'comfyCloud.openMonitorOnSubmit': true });
      await openFile('invert.json');
      await emu.holdNodes({ nodeIds: ['2'] });
      try {
        await palette('Comfy Cloud: Submit Workflow');
        const held = await emu.heldAt(undefined, 1);
        await monitorTab(held.jobId).waitFor();
        await graphSection().locator('g.graph-node.state-running[data-id="2"]').waitFor();
        await graphSection().scrollIntoViewIfNeeded();
        const running = await nodeStates();
        console.log(`     held at node 2: ${JSON.stringify(running)}`);
        if (JSON.stringify(running) !== JSON.stringify({ 1: 'done', 2: 'running', 3: 'waiting' }))
          throw new Error(`the graph shows ${JSON.stringify(running)} while node 2 is held`);
        await pointerAway();
        await screenshot('monitor-graph-running');
        await emu.releaseNodes(held.jobId);
      } finally {
        await emu.clearHolds();
      }
      await monitor()
        .locator('vscode-badge.status', { hasText: /succeeded/i })
        .waitFor();
      await until('every node done in the graph', async () => {
        const st = await nodeStates();
        return Object.values(st).length === 3 && Object.values(st).every((x) => x === 'done') ? st : undefined;
      });
      await graphSection().scrollIntoViewIfNeeded();
      await pointerAway();
      await screenshot('monitor-graph-done');
      await palette('View: Close All Editors');
    },
  );

  await step(
    "monitor graph: a failed node shows its error; clicking it (Go to node) selects the node's JSON in the file",
    async () => {
      await clearNotifications();
      await palette('View: Close All Editors');
      const failing = {
        3: { class_type: 'EmptyImage', inputs: { width: 16384, height: 16384, batch_size: 64, color: 0 } },
        4: { class_type: 'ImageInvert', inputs: { image: ['3', 0] } },
        5: { class_type: 'SaveImage', inputs: { images: ['4', 0], filename_prefix: 'monitor-graph-fail' } },
      };
      fs.writeFileSync(path.join(ws, 'monitor-graph-fail.json'), JSON.stringify(failing, null, 2) + '\n');
      await writeSettings(machineSettings, { 'comfyCloud.openMonitorOnSubmit': true });
      await openFile('monitor-graph-fail.json');
      const from = emu.requests.length;
      await palette('Comfy Cloud: Submit Workflow');
      const jobId = await submittedJobId(from);
      await monitorTab(jobId).waitFor();
      const failed = graphNode('3');
      await graphSection().locator('g.graph-node.state-failed[data-id="3"]').waitFor();
      const label = await failed.getAttribute('aria-label');
      if (!/failed/.test(label ?? '')) throw new Error(`the failed node's name does not say failed: ${label}`);
      const error = await graphSection().locator('.graph-node-error').first().textContent();
      if (!/✗/.test(error ?? '')) throw new Error(`no error under the failed node: ${error}`);
      await graphSection().scrollIntoViewIfNeeded();
      await pointerAway();
      await screenshot('monitor-graph-failed');
      // The graph opens readable on its output node; the failed node is reached with Fit All, as a user would.
      await graphSection().locator('button.graph-button[aria-label="Fit All"]').click();
      await failed.locator('rect').first().click();
      await page.locator('.tabs-container .tab.active[data-resource-name="monitor-graph-fail.json"]').waitFor();
      // The selection is the node's key, `"3"` (3 characters with its quotes): the status bar says so.
      await page
        .locator('.statusbar-item', { hasText: /Ln 2, Col \d+ \(3 selected\)/ })
        .first()
        .waitFor();
      await screenshot('monitor-graph-go-to-node');
      await palette('View: Close All Editors');
    },
  );

  await step(
    'monitor graph: a job that fails at its fourth node keeps nodes 1-3 done and marks node 4 failed',
    async () => {
      await clearNotifications();
      await palette('View: Close All Editors');
      // Node 4 scales to more pixels than the emulator allows in a batch: it fails when it runs, after 1-3 ran.
      const chain = {
        1: { class_type: 'EmptyImage', inputs: { width: 64, height: 64, batch_size: 1, color: 0 } },
        2: { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
        3: { class_type: 'ImageInvert', inputs: { image: ['2', 0] } },
        4: {
          class_type: 'ImageScale',
          inputs: { image: ['3', 0], upscale_method: 'nearest-exact', width: 16384, height: 16384, crop: 'disabled' },
        },
        5: { class_type: 'SaveImage', inputs: { images: ['4', 0], filename_prefix: 'monitor-chain-fail' } },
      };
      fs.writeFileSync(path.join(ws, 'monitor-chain-fail.json'), JSON.stringify(chain, null, 2) + '\n');
      await writeSettings(machineSettings, { 'comfyCloud.openMonitorOnSubmit': true });
      await openFile('monitor-chain-fail.json');
      await emu.holdNodes({ nodeIds: ['4'] });
      try {
        await palette('Comfy Cloud: Submit Workflow');
        const held = await emu.heldAt(undefined, 3);
        await monitorTab(held.jobId).waitFor();
        await graphSection().locator('g.graph-node.state-running[data-id="4"]').waitFor();
        const running = await nodeStates();
        console.log(`     held at node 4: ${JSON.stringify(running)}`);
        if (JSON.stringify(running) !== JSON.stringify({ 1: 'done', 2: 'done', 3: 'done', 4: 'running', 5: 'waiting' }))
          throw new Error(`the graph shows ${JSON.stringify(running)} while node 4 runs`);
        await graphSection().scrollIntoViewIfNeeded();
        await pointerAway();
        await screenshot('monitor-graph-chain-running');
      } finally {
        await emu.clearHolds();
      }
      await graphSection().locator('g.graph-node.state-failed[data-id="4"]').waitFor();
      const failed = await nodeStates();
      console.log(`     failed: ${JSON.stringify(failed)}`);
      if (JSON.stringify(failed) !== JSON.stringify({ 1: 'done', 2: 'done', 3: 'done', 4: 'failed', 5: 'none' }))
        throw new Error(`after the failure the graph shows ${JSON.stringify(failed)}`);
      await graphSection().scrollIntoViewIfNeeded();
      await pointerAway();
      await screenshot('monitor-graph-chain-failed');
      await palette('View: Close All Editors');
    },
  );
}
