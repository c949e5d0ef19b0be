// A batch's contact sheet inside a real VS Code extension host, against the emulator started here: a 2 × 2 grid batch
// is recorded and run with the core's runBatch (its jobs held at their first node until the sheet is open), the sheet
// opens with the grid's rows and columns and no image; when the jobs end it is posted again with every cell succeeded
// and its image as a webview URI; local resources are limited to dist/webview and the batch's output root; opening it
// again reveals the same panel; a cell opens its image and its job's monitor by index; an invalid message is dropped.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { activateExtension, EXTENSION_ID } from './workspace';
import { until } from './until';
import { BatchStore, StateStore } from '../../src/core/state';
import { V2Client } from '../../src/core/v2/client';
import { V2JobBackend } from '../../src/core/v2/jobBackend';
import { recordBatch, runBatch, variationsFromSetOptions, type BatchRunResult } from '../../src/core/batch';
import { headlessJobService } from '../../src/core/backends';
import type { SheetHostMessage, SheetView } from '../../src/core/batch/sheetProtocol';
import { startEmulator } from '../../src/emulator';
import { ContactSheetPanels, type ContactSheetPanel } from '../../src/extension/batches/contactSheet';
import type { ComfyCloudApi } from '../../src/extension/api';

type Emulator = Awaited<ReturnType<typeof startEmulator>>;

const WORKFLOW = {
  '1': { class_type: 'EmptyImage', inputs: { width: 64, height: 64, batch_size: 1, color: 0 } },
  '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
  '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'sheet' } },
};

/** The last sheet the panel posted. */
function lastSheet(panel: ContactSheetPanel): SheetView | undefined {
  return [...panel.posted].reverse().find((m): m is SheetHostMessage => m.type === 'sheet')?.sheet;
}

/** The first sheet posted that `check` accepts, now or after a later post. */
function sheetWhere(panel: ContactSheetPanel, what: string, check: (s: SheetView) => boolean): Promise<SheetView> {
  return until(
    () => `${what}; last sheet: ${JSON.stringify(lastSheet(panel)?.cells.map((c) => [c.state, c.imageUri !== null]))}`,
    [panel.onDidPost],
    () => {
      const s = lastSheet(panel);
      return s && check(s) ? s : undefined;
    },
  );
}

suite('Contact sheet of a batch in a real VS Code extension host', () => {
  let emu: Emulator;
  let extension: ComfyCloudApi;
  let dir: string;
  let panels: ContactSheetPanels;
  let changes: vscode.EventEmitter<string>;
  let backend: V2JobBackend;

  suiteSetup(async () => {
    emu = await startEmulator({ port: 0 });
    // The extension's own connection is the emulator too: a cell's job link opens its monitor there.
    await vscode.workspace
      .getConfiguration('comfyCloud')
      .update('baseUrl', emu.baseUrl, vscode.ConfigurationTarget.Global);
    extension = await activateExtension();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cc-sheet-'));
    changes = new vscode.EventEmitter<string>();
    backend = new V2JobBackend(new V2Client({ baseUrl: emu.baseUrl, apiKey: 'sheet-test' }));
  });

  suiteTeardown(async () => {
    emu?.holdNodes(null);
    panels?.dispose();
    changes?.dispose();
    await backend?.close();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.workspace
      .getConfiguration('comfyCloud')
      .update('baseUrl', undefined, vscode.ConfigurationTarget.Global);
    await emu?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a 2 × 2 grid batch: the sheet shows its rows and columns, then every image when its jobs end; cells open their image and their job', async function () {
    this.timeout(180_000);
    const store = new StateStore(dir);
    const batches = new BatchStore(dir);
    const out = path.join(dir, 'out');
    const variations = await variationsFromSetOptions(WORKFLOW, ['1.color=1..2', '1.width=64..96:32'], 'grid', dir);
    const batch = await recordBatch(batches, WORKFLOW, variations, {
      baseUrl: emu.baseUrl,
      concurrency: 4,
      nowMs: Date.now(),
    });
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext);
    panels = new ContactSheetPanels({
      extensionUri: ext.extensionUri,
      display: extension.display,
      log: extension.log,
      store,
      batches,
      outputDir: () => out,
      onDidChange: changes.event,
    });

    // The jobs stand still at their first node until the sheet was seen without images.
    emu.holdNodes({});
    let running: Promise<BatchRunResult> | undefined;
    try {
      // The runner follows its jobs through a job service (one watch per job), as the extension's does.
      const lease = await headlessJobService(() => ({ backend }), { store }).lease();
      running = runBatch(lease, batch.batchId, { store, batches, out, onEvent: () => changes.fire(batch.batchId) });
      const opened = await panels.openCommand(batch.batchId);
      assert.ok(opened, 'no panel');
      const panel = opened;
      assert.equal(await panels.open(batch.batchId), panel, 'a second open reveals the same panel');

      const first = await sheetWhere(panel, 'the sheet of the grid', () => true);
      assert.deepEqual(first.layout, {
        kind: 'grid',
        rows: { input: '1.color', values: ['1', '2'] },
        columns: { input: '1.width', values: ['64', '96'] },
      });
      assert.deepEqual(
        first.cells.map((c) => c.label),
        ['1.color=1, 1.width=64', '1.color=1, 1.width=96', '1.color=2, 1.width=64', '1.color=2, 1.width=96'],
      );
      assert.ok(
        first.cells.every((c) => c.imageUri === null),
        'no image before any job ended',
      );
      assert.equal(first.anyEnded, false);
      // Every variation submitted (its job held): the sheet follows the batch's changes.
      await sheetWhere(panel, 'every cell with its job', (s) =>
        s.cells.every((c) => c.jobId !== null && (c.state === 'queued' || c.state === 'running')),
      );

      // The page reads local resources only from dist/webview and the batch's output root.
      const roots = (panel.panel.webview.options.localResourceRoots ?? []).map((u) => u.fsPath).sort();
      assert.deepEqual(roots, [path.join(ext.extensionUri.fsPath, 'dist', 'webview'), out].sort());
    } finally {
      emu.holdNodes(null);
    }
    const result = await running;
    assert.equal(result.allSucceeded, true);
    const panel = panels.panelOf(batch.batchId)!;
    const done = await sheetWhere(
      panel,
      'every cell succeeded with its image',
      (s) => s.finished && s.cells.every((c) => c.state === 'succeeded' && c.imageUri !== null),
    );
    assert.equal(done.counts, '4 succeeded');
    assert.equal(done.anyEnded, true);
    for (const [n, cell] of done.cells.entries()) {
      const outcome = result.outcomes[n]!;
      assert.equal(cell.jobId, outcome.jobId);
      // A webview URI of the variation's file, never the file's path.
      assert.ok(!cell.imageUri!.startsWith('/') && !cell.imageUri!.startsWith('file:'), cell.imageUri!);
      assert.ok(
        cell.imageUri!.includes(encodeURIComponent(path.basename(outcome.saved[0]!.path))) ||
          cell.imageUri!.includes(path.basename(outcome.saved[0]!.path)),
        `${cell.imageUri} is not ${outcome.saved[0]!.path}`,
      );
      assert.equal(cell.imageName, path.basename(outcome.saved[0]!.path));
    }

    // The page names a cell by index: its image opens in an editor, its job's monitor opens.
    assert.equal(await panel.receive({ type: 'openImage', index: 1 }), true);
    const image = result.outcomes[1]!.saved[0]!.path;
    await until('the image open in a tab', [vscode.window.tabGroups.onDidChangeTabs], () =>
      vscode.window.tabGroups.all.some((g) =>
        g.tabs.some((t) => (t.input as { uri?: vscode.Uri } | undefined)?.uri?.fsPath === image),
      ),
    );
    assert.equal(await panel.receive({ type: 'openJob', index: 2 }), true);
    const jobId = result.outcomes[2]!.jobId!;
    await until(`the monitor of job ${jobId}`, [vscode.window.tabGroups.onDidChangeTabs], () =>
      extension.monitors?.panelOf(jobId),
    );
    // A message that names a path, or a cell that is not there, opens nothing.
    assert.equal(await panel.receive({ type: 'openImage', path: '/etc/passwd' }), undefined);
    assert.equal(await panel.receive({ type: 'openImage', index: 99 }), false);
  });
});
