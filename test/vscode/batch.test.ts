// Batches inside a real VS Code extension host, against the emulator started here: "Run with Variations…" on a node
// input (the quick input stubbed) makes one job per value, the Jobs view shows the batch as one item `N/N done` with
// its jobs beneath, the outputs are in `<batch>/<label>/`; Cancel Batch stops the submissions; a batch a killed window
// left unfinished is resumed by the start-up path without a prompt, every variation one job; bad input records nothing.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { workspaceFile, activateExtension } from './workspace';
import { until as untilEvent } from './until';
import { startEmulator } from '../../src/emulator';
import { BatchStore } from '../../src/core/state';
import { V2Client } from '../../src/core/v2/client';
import { V2JobBackend } from '../../src/core/v2/jobBackend';
import { applyVariation, recordBatch, variationOf, variationsFromSetOptions } from '../../src/core/batch';
import type { ApiWorkflow } from '../../src/core/util';
import type { ComfyCloudApi } from '../../src/extension/api';
import type { JobsNode } from '../../src/extension/jobs/jobsView';

const DEADLINE_MS = 90_000; // generous: a loaded machine is slow, never a reason to fail
type Emulator = Awaited<ReturnType<typeof startEmulator>>;
type Item = vscode.QuickPickItem & { value?: string };

suite('Batches in a real VS Code extension host', () => {
  let emu: Emulator;
  let extension: ComfyCloudApi;
  const config = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('comfyCloud');
  const window = vscode.window as { -readonly [K in keyof typeof vscode.window]: (typeof vscode.window)[K] };
  const original = {
    showQuickPick: window.showQuickPick,
    showInputBox: window.showInputBox,
    showOpenDialog: window.showOpenDialog,
  };
  /** The quick inputs shown (quick picks and input boxes), by title. */
  let asked: string[] = [];

  /** A state, waited for on the events that change it (until.ts). */
  const until = <T>(what: string | (() => string), check: () => Promise<T | undefined | false>): Promise<T> =>
    untilEvent(
      what,
      [extension.batches.onDidChange, extension.jobsView.provider.onDidChangeTreeData, extension.jobs.onDidChangeJob],
      check,
      DEADLINE_MS,
    );

  /** Answers the next quick pick with the item of `value`, and the next input box with `answer`. */
  function script(value: string, answer: string): void {
    window.showQuickPick = (async (
      items: readonly Item[] | Thenable<readonly Item[]>,
      options?: vscode.QuickPickOptions,
    ) => {
      asked.push(`pick ${options?.title ?? ''}`);
      return [...(await items)].find((i) => i.value === value);
    }) as unknown as typeof vscode.window.showQuickPick;
    window.showInputBox = (async (options?: vscode.InputBoxOptions) => {
      asked.push(`box ${options?.title ?? ''}`);
      // The box's own check, as the user would see it.
      const problem = await options?.validateInput?.(answer);
      assert.equal(problem ?? undefined, undefined, `the input box refused ${answer}: ${String(problem)}`);
      return answer;
    }) as typeof vscode.window.showInputBox;
  }

  /** Makes every quick input fail the test: nothing may be asked. */
  function askNothing(): void {
    const refuse = (async (...args: unknown[]) => {
      asked.push(`unexpected ${JSON.stringify(args[1] ?? args[0])}`);
      return undefined;
    }) as never;
    window.showQuickPick = refuse;
    window.showInputBox = refuse;
    window.showOpenDialog = refuse;
  }

  /** The colors of the emulator's jobs whose color is in [from, to], one per job (a job created twice shows twice). */
  async function colorsOnServer(from: number, to: number): Promise<number[]> {
    const { jobs } = (await (await fetch(`${emu.baseUrl}/api/v2/jobs?limit=1000`)).json()) as {
      jobs: { id: string }[];
    };
    const colors: number[] = [];
    for (const j of jobs) {
      const { workflow } = (await (await fetch(`${emu.baseUrl}/api/v2/jobs/${j.id}/workflow`)).json()) as {
        workflow: Record<string, { inputs: { color?: number } }>;
      };
      const color = workflow['1']?.inputs.color;
      if (typeof color === 'number' && color >= from && color <= to) colors.push(color);
    }
    return colors.sort((a, b) => a - b);
  }

  /** Opens invert.json with the cursor on the value of node 1's `color`. */
  async function cursorOnColor(): Promise<vscode.TextEditor> {
    const document = await vscode.workspace.openTextDocument(workspaceFile('invert.json'));
    const editor = await vscode.window.showTextDocument(document);
    const text = document.getText();
    const at = document.positionAt(text.indexOf('16711680'));
    editor.selection = new vscode.Selection(at, at);
    return editor;
  }

  suiteSetup(async () => {
    emu = await startEmulator({ port: 0 });
    await config().update('baseUrl', emu.baseUrl, vscode.ConfigurationTarget.Global);
    extension = await activateExtension();
    await vscode.commands.executeCommand('comfyCloud.jobs.focus');
  });

  setup(() => {
    asked = [];
  });

  teardown(async () => {
    window.showQuickPick = original.showQuickPick;
    window.showInputBox = original.showInputBox;
    window.showOpenDialog = original.showOpenDialog;
    emu.holdNodes(null);
    emu.releaseNodes();
    await config().update('batch.concurrency', undefined, vscode.ConfigurationTarget.Global);
  });

  suiteTeardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await config().update('baseUrl', undefined, vscode.ConfigurationTarget.Global);
    await emu?.close();
  });

  test('Run with Variations on an input: one job per value, the batch item with its counts and its jobs beneath, the outputs in <batch>/<label>/', async () => {
    await cursorOnColor();
    script('range', '1001..1004');
    const notices: { message: string; actions: string[] }[] = [];
    const sub = extension.display.onDidShow((n) => notices.push(n));
    const batchId = await vscode.commands.executeCommand<string | undefined>('comfyCloud.runWithVariations');
    assert.ok(batchId, 'no batch was recorded');
    assert.deepEqual(
      asked.map((a) => a.split(' ')[0]),
      ['pick', 'box'],
      'the quick input asked the kind, then the values',
    );
    const end = await extension.batches.whenDone(batchId);
    assert.ok(end, 'no runner runs the batch');
    const { result, error } = await end;
    assert.equal(error, undefined, `the run stopped: ${String(error)}`);
    assert.equal(result?.allSucceeded, true, result?.outcomes.map((o) => `${o.label}: ${o.state}`).join('; '));
    assert.deepEqual(await colorsOnServer(1001, 1004), [1001, 1002, 1003, 1004], 'one job per value, none twice');
    sub.dispose();
    // One notice for the whole batch when it ends, with "Open Contact Sheet"; none per job.
    const told = notices.filter((n) => n.message.includes(batchId.slice(0, 10)) || /job/.test(n.message));
    assert.deepEqual(
      told.map((n) => n.message),
      [`Comfy Cloud: batch invert.json (${batchId.slice(0, 10)}) 4 succeeded`],
    );
    assert.deepEqual(told[0]!.actions, ['Open Contact Sheet']);

    // The Jobs view: one batch item `4 succeeded` (under Recent: finished), its four jobs beneath, none loose.
    const item = await until(
      () => 'the batch item 4 succeeded',
      async () => {
        const model = await extension.jobsView.provider.batchModel(batchId);
        return model?.description === '4 succeeded' && model.jobs.length === 4 ? model : undefined;
      },
    );
    assert.equal(item.label, 'invert.json');
    assert.equal(item.contextValue, 'batch:finished');
    const provider = extension.jobsView.provider;
    const recent = await provider.getChildren({ kind: 'group', group: 'recent' });
    const node = recent.find((n): n is JobsNode & { kind: 'batch' } => n.kind === 'batch' && n.batchId === batchId);
    assert.ok(node, 'the batch is not an item of Recent');
    const treeItem = provider.getTreeItem(node);
    assert.equal(treeItem.description, '4 succeeded');
    const children = await provider.getChildren(node);
    assert.deepEqual(
      children.map((c) => provider.getTreeItem(c).label),
      ['0-1001', '1-1002', '2-1003', '3-1004'],
    );
    const jobIds = new Set(children.map((c) => provider.entryOf(c)?.jobId));
    const loose = [...(await provider.getChildren({ kind: 'group', group: 'running' })), ...recent].filter(
      (n) => n.kind === 'job' && jobIds.has(provider.entryOf(n)?.jobId),
    );
    assert.deepEqual(loose, [], 'a batch job is also listed loose');

    // The outputs: `<outputs>/<batch id>/<label>/`, in the workspace's .comfy/outputs.
    const batch = (await extension.batches.status(batchId))!.batch;
    const root = extension.batches.outputDir(batch);
    assert.equal(root, path.join(workspaceFile('.comfy').fsPath, 'outputs', batchId));
    for (const label of ['0-1001', '1-1002', '2-1003', '3-1004']) {
      const files = fs.readdirSync(path.join(root, label));
      assert.ok(
        files.some((f) => f.endsWith('.png')),
        `no output in ${label}: ${files.join(', ')}`,
      );
    }
  });

  test("a batch's jobs shown running in the Jobs view have one watch each (the runner's is the view's); when the run is over, the batch item and the status bar already say so", async () => {
    emu.holdNodes({});
    await cursorOnColor();
    const batchId = await vscode.commands.executeCommand<string | undefined>(
      'comfyCloud.runWithVariations',
      undefined,
      { kind: 'range', values: '6001..6004' },
    );
    assert.ok(batchId, 'no batch was recorded');
    const end = extension.batches.whenDone(batchId);
    assert.ok(end, 'no runner runs the batch');
    // The variations' jobs submitted (the first held at its first node, the others queued behind it) and shown running
    // under the batch item: the view follows them.
    let shown = '';
    await untilEvent(
      () =>
        `the batch's four jobs running in the Jobs view: ${emu.holdState().held.length} held; the batch item: ${shown}`,
      [extension.batches.onDidChange, extension.jobsView.provider.onDidChangeTreeData, extension.jobs.onDidChangeJob],
      async () => {
        const model = await extension.jobsView.provider.batchModel(batchId);
        shown = `${model?.description} ${model?.jobs.map((j) => `${j.label} ${j.group}`).join(', ')}`;
        return emu.holdState().held.length === 1 &&
          model?.jobs.length === 4 &&
          model.jobs.every((j) => j.group === 'running')
          ? model
          : undefined;
      },
      30_000,
    );
    emu.holdNodes(null);
    emu.releaseNodes();
    const { result, error } = await end;
    assert.equal(error, undefined, `the run stopped: ${String(error)}`);
    assert.equal(result?.allSucceeded, true);
    // One source, in one tick: the run is over (what the contact sheet shows): the Jobs view and the status bar say so
    // now, with no wait.
    const ran = await extension.jobsView.provider.batchModel(batchId);
    assert.equal(ran?.description, '4 succeeded', `the Jobs view lags the run: ${ran?.description}`);
    assert.equal(extension.status.runningCount, 0, 'the status bar still counts a running job');
    // One watch per job: one event stream each, and no poll of a second watch beside it.
    const jobIds = (result?.outcomes ?? []).map((o) => o.jobId);
    const streams = jobIds.map(
      (id) => emu.requests.filter((r) => r.method === 'GET' && r.path === `/api/v2/jobs/${id}/events`).length,
    );
    const reads = jobIds.map(
      (id) => emu.requests.filter((r) => r.method === 'GET' && r.path === `/api/v2/jobs/${id}`).length,
    );
    console.log(`      event streams per job ${streams.join(', ')}; reads per job ${reads.join(', ')}`);
    assert.deepEqual(streams, [1, 1, 1, 1], 'event streams per job');
  });

  test('Cancel Batch stops the submissions: nothing more is sent, the running job is canceled', async () => {
    await config().update('batch.concurrency', 1, vscode.ConfigurationTarget.Global);
    emu.holdNodes({});
    await cursorOnColor();
    const batchId = await vscode.commands.executeCommand<string | undefined>(
      'comfyCloud.runWithVariations',
      undefined,
      { kind: 'range', values: '2001..2006' },
    );
    assert.ok(batchId, 'no batch was recorded');
    // The first variation's job is held at its first node: one job in flight (concurrency 1).
    await emu.whenHeld();
    // Its job id heard (the record holds it): the cancel names the job to cancel.
    await until(
      'the first variation submitted',
      async () => (await extension.batches.status(batchId))?.variations[0]?.jobId,
    );
    await vscode.commands.executeCommand('comfyCloud.cancelBatch', batchId);
    emu.holdNodes(null);
    emu.releaseNodes();
    const { result } = await extension.batches.whenDone(batchId)!;
    assert.ok(result, 'the run stopped without a result');
    const created = await colorsOnServer(2001, 2006);
    assert.deepEqual(created, [2001], 'a variation was sent after the cancel');
    assert.deepEqual(
      result.outcomes.map((o) => o.state),
      ['canceled', 'not_sent', 'not_sent', 'not_sent', 'not_sent', 'not_sent'],
    );
    const status = await extension.batches.status(batchId);
    assert.equal(status?.finished, true);
    const model = await until('the batch item canceled', async () => {
      const m = await extension.jobsView.provider.batchModel(batchId);
      return m?.contextValue === 'batch:canceled' ? m : undefined;
    });
    assert.equal(model.description, '1 canceled, 5 not sent');
  });

  test('Run with Variations on a UI-format file offers the conversion (no code in the words); converted, the variations run on the API graph', async () => {
    askNothing();
    const uri = workspaceFile('ui-convert.json');
    const notices: { message: string; actions: string[] }[] = [];
    const sub = extension.display.onDidShow((n) => notices.push(n));
    try {
      const refused = await vscode.commands.executeCommand<string | undefined>('comfyCloud.runWithVariations', uri, {
        nodeId: '1',
        field: 'color',
        kind: 'range',
        values: '7001..7002',
      });
      assert.equal(refused, undefined);
      const offer = await until('the offer to convert', async () =>
        notices.find((n) => n.actions.includes('Convert and Run with Variations')),
      );
      assert.match(offer.message, /UI-format workflow/);
      assert.doesNotMatch(offer.message, /workflow_format_ui/, 'a code in the sentence');

      const batchId = await vscode.commands.executeCommand<string | undefined>('comfyCloud.runWithVariations', uri, {
        nodeId: '1',
        field: 'color',
        kind: 'range',
        values: '7001..7002',
        convertUiFormat: true,
      });
      assert.ok(batchId, `no batch was recorded: ${JSON.stringify(notices.slice(-2))}`);
      const { result, error } = await extension.batches.whenDone(batchId)!;
      assert.equal(error, undefined, `the run stopped: ${String(error)}`);
      assert.equal(result?.allSucceeded, true);
      assert.deepEqual(await colorsOnServer(7001, 7002), [7001, 7002], 'one job per value, on the API graph');
      const status = await extension.batches.status(batchId);
      assert.match(status?.batch.workflowFile ?? '', /ui-convert\.api\.json$/, 'the batch names the converted graph');
    } finally {
      sub.dispose();
    }
  });

  test('a batch a killed window left unfinished is resumed by the start-up path without a prompt; every variation is one job', async () => {
    // As a killed window leaves it: the batch recorded (by VS Code), its first variation accepted (its record
    // `created` with the job id), the others never sent.
    const workflow = JSON.parse(fs.readFileSync(workspaceFile('invert.json').fsPath, 'utf8')) as ApiWorkflow;
    const batches = new BatchStore(extension.jobs.store.dir);
    const variations = await variationsFromSetOptions(workflow, ['1.color=3001..3003'], 'grid', '.');
    const batch = await recordBatch(batches, workflow, variations, {
      baseUrl: emu.baseUrl,
      workflowFile: workspaceFile('invert.json').fsPath,
      concurrency: 2,
      nowMs: Date.now(),
      client: 'vscode',
    });
    const backend = new V2JobBackend(new V2Client({ baseUrl: emu.baseUrl }));
    try {
      const first = batch.variations[0]!;
      await backend.submit(
        applyVariation(workflow, variationOf(first), () => undefined),
        {
          store: extension.jobs.store,
          idempotencyKey: first.idempotencyKey,
          batchId: batch.batchId,
          client: 'vscode',
          busy: 'throw',
        },
      );
    } finally {
      await backend.close();
    }
    // A batch the CLI recorded and left unfinished is the CLI's to resume: a window never runs it unasked.
    const cli = await recordBatch(
      batches,
      workflow,
      await variationsFromSetOptions(workflow, ['1.color=5001..5001'], 'grid', '.'),
      { baseUrl: emu.baseUrl, nowMs: Date.now(), client: 'cli' },
    );
    assert.equal(extension.batches.isRunning(batch.batchId), false);
    askNothing();
    // The start-up path (activation runs it once the connection is ready, and again when it changes or comes back).
    const started = await extension.batches.resumeAll();
    assert.deepEqual(started, [batch.batchId]);
    // Its end, taken at once: on a slow machine the run may be over before the second reading returns.
    const done = extension.batches.whenDone(batch.batchId);
    assert.ok(done, 'no runner runs the resumed batch');
    // Never two runners for one batch in one window: a second reading starts nothing.
    assert.deepEqual(await extension.batches.resumeAll(), []);
    const { result } = await done;
    assert.equal(result?.allSucceeded, true, result?.outcomes.map((o) => `${o.label}: ${o.state}`).join('; '));
    assert.deepEqual(
      await colorsOnServer(3001, 3003),
      [3001, 3002, 3003],
      'one job per variation, the accepted one not sent again',
    );
    assert.equal(extension.batches.isRunning(cli.batchId), false, "the CLI's batch was resumed");
    assert.deepEqual(await colorsOnServer(5001, 5001), [], "a variation of the CLI's batch was sent");
    assert.deepEqual(asked, [], 'something was asked');
    // Finished now: the next start-up leaves it alone.
    assert.deepEqual(await extension.batches.resumeAll(), []);
  });

  test('bad input records nothing: a range with no values, a link input, an invalid batch file', async () => {
    const batches = new BatchStore(extension.jobs.store.dir);
    const before = (await batches.list()).length;
    const errors: string[] = [];
    const sub = extension.display.onDidShow((n) => n.severity === 'error' && errors.push(n.message));
    try {
      await cursorOnColor();
      script('range', '8..1');
      // The input box's own check refuses it first; given anyway, the command refuses it.
      window.showInputBox = (async () => '8..1') as typeof vscode.window.showInputBox;
      assert.equal(await vscode.commands.executeCommand('comfyCloud.runWithVariations'), undefined);
      assert.equal(
        await vscode.commands.executeCommand('comfyCloud.runWithVariations', undefined, {
          nodeId: '2',
          field: 'image',
          kind: 'list',
          values: 'a, b',
        }),
        undefined,
      );
      const bad = workspaceFile('bad.batch.json');
      fs.writeFileSync(bad.fsPath, JSON.stringify({ workflow: 'invert.json', set: { seed: '1..2' } }));
      try {
        assert.equal(await vscode.commands.executeCommand('comfyCloud.runBatchFile', bad), undefined);
      } finally {
        fs.rmSync(bad.fsPath, { force: true });
      }
    } finally {
      sub.dispose();
    }
    assert.equal((await batches.list()).length, before, 'a batch was recorded');
    assert.equal(errors.length, 3, errors.join('\n'));
    assert.match(errors[0]!, /no values/);
    assert.match(errors[1]!, /link/);
    assert.match(errors[2]!, /not a valid batch file/);
  });

  test('a *.batch.json is checked against the batch file schema (jsonValidation): a bad mode is a diagnostic', async () => {
    const file = workspaceFile('schema-check.batch.json');
    fs.writeFileSync(
      file.fsPath,
      JSON.stringify({ workflow: 'invert.json', mode: 'all', set: { '1.color': '1..2' } }, null, 2),
    );
    try {
      const document = await vscode.workspace.openTextDocument(file);
      await vscode.window.showTextDocument(document);
      const diagnostics = await untilEvent(
        'a diagnostic of the batch file schema',
        [vscode.languages.onDidChangeDiagnostics],
        () => {
          const found = vscode.languages.getDiagnostics(file);
          return found.length > 0 ? found : undefined;
        },
        30_000,
      );
      const line = document
        .getText()
        .split('\n')
        .findIndex((l) => l.includes('"mode"'));
      assert.ok(
        diagnostics.some((d) => d.range.start.line === line),
        diagnostics.map((d) => `${d.range.start.line}: ${d.message}`).join('; '),
      );
    } finally {
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
      fs.rmSync(file.fsPath, { force: true });
    }
  });

  test('Run Batch on a batch file: its workflow relative to it, one job per variation', async () => {
    const file = workspaceFile('colors.batch.json');
    fs.writeFileSync(
      file.fsPath,
      JSON.stringify({
        workflow: 'invert.json',
        mode: 'zip',
        set: { '1.color': [4001, 4002], '3.filename_prefix': ['a', 'b'] },
      }),
    );
    try {
      const batchId = await vscode.commands.executeCommand<string | undefined>('comfyCloud.runBatchFile', file);
      assert.ok(batchId, 'no batch was recorded');
      const { result } = await extension.batches.whenDone(batchId)!;
      assert.equal(result?.allSucceeded, true);
      assert.deepEqual(
        result.outcomes.map((o) => o.label),
        ['0-4001_a', '1-4002_b'],
      );
      assert.deepEqual(await colorsOnServer(4001, 4002), [4001, 4002]);
    } finally {
      fs.rmSync(file.fsPath, { force: true });
    }
  });
});
