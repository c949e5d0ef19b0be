// The Assets view inside a real VS Code extension host, against the emulator
// started here: "Upload to Comfy Cloud" (as the Explorer calls it: uri and selected uris) uploads a file, which then
// shows in the view; the same file again is a dedup hit with no bytes sent; Copy core/ASSET Reference puts the JSON
// a workflow needs on the clipboard (a workflow using it is accepted); Download saves the bytes; Delete of an asset a
// running job uses is refused with asset_in_use and keeps it; Delete removes it from the server and the view.
import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { activateExtension } from './workspace';
import { until as untilEvent } from './until';
import { startEmulator } from '../../src/emulator';
import { outputRecord } from '../../src/core/state';
import type { ComfyCloudApi } from '../../src/extension/api';
import type { AssetsNode } from '../../src/extension/assets/assetsView';
import type { UploadOutcome } from '../../src/extension/assets/assetUpload';

/** How long the view may take to show a change (ms): a deadline, not a wait. */
const DEADLINE_MS = 90_000; // generous: a loaded machine is slow, never a reason to fail
type Emulator = Awaited<ReturnType<typeof startEmulator>>;

/** A 1×1 PNG (LoadImage reads it). */
const PNG_1X1 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC',
  'base64',
);

suite('Assets view in a real VS Code extension host', () => {
  let emu: Emulator;
  let extension: ComfyCloudApi;
  let dir: string;
  let file: string;
  let first: UploadOutcome;

  /** A state, waited for on the events that change it (until.ts). */
  const until = <T>(what: string, check: () => Promise<T | undefined>): Promise<T> =>
    untilEvent(what, [extension.assetsView.provider.onDidChangeTreeData], check, DEADLINE_MS);

  /** The view's nodes with their tree items and asset ids. */
  async function shown(): Promise<{ node: AssetsNode; item: vscode.TreeItem; assetId: string | undefined }[]> {
    const provider = extension.assetsView.provider;
    const nodes = await provider.getChildren();
    return nodes.map((node) => ({ node, item: provider.getTreeItem(node), assetId: provider.recordOf(node)?.assetId }));
  }

  suiteSetup(async () => {
    // No node delay: the job that uses an asset is held at its first node while it must be running.
    emu = await startEmulator({ port: 0 });
    await vscode.workspace
      .getConfiguration('comfyCloud')
      .update('baseUrl', emu.baseUrl, vscode.ConfigurationTarget.Global);
    extension = await activateExtension();
    assert.ok(extension?.assetsView, 'activate() did not return the extension with its assetsView');
    await vscode.commands.executeCommand('comfyCloud.assets.focus');
    // Shown, and holding this emulator's records: an upload is then added to what the view holds. (A re-read the
    // view starts later, when the workbench tells it is shown, could miss a record stored meanwhile until the store's
    // file watcher tells; on a loaded machine that came after the test's deadline.)
    const view = extension.assetsView.view;
    const provider = extension.assetsView.provider;
    await untilEvent(
      () => `the Assets view shown (${view.visible}) with this emulator's assets (it shows ${provider.activeBaseUrl})`,
      [view.onDidChangeVisibility, provider.onDidChangeTreeData],
      async () => {
        if (!view.visible) return undefined;
        await provider.model();
        return provider.activeBaseUrl === emu.baseUrl || undefined;
      },
      DEADLINE_MS,
    );
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cc-assets-view-'));
    // Random bytes after the PNG: a file no earlier run uploaded.
    file = path.join(dir, 'photo.png');
    fs.writeFileSync(file, Buffer.concat([PNG_1X1, randomBytes(64)]));
  });

  suiteTeardown(async () => {
    await vscode.workspace
      .getConfiguration('comfyCloud')
      .update('baseUrl', undefined, vscode.ConfigurationTarget.Global);
    await emu?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('Upload to Comfy Cloud (from the Explorer: uri, selected uris) uploads the file, and it shows in the Assets view', async () => {
    const before = emu.requests.length;
    const uri = vscode.Uri.file(file);
    const outcomes = await vscode.commands.executeCommand<UploadOutcome[]>('comfyCloud.uploadAsset', uri, [uri]);
    assert.equal(outcomes.length, 1);
    first = outcomes[0]!;
    assert.ok(first.assetId, `not uploaded: ${JSON.stringify(first)}`);
    assert.equal(first.dedup, false);
    const posts = emu.requests.slice(before).filter((r) => r.method === 'POST' && r.path === '/api/v2/assets');
    assert.equal(posts.length, 1, 'the bytes were not sent once');
    const row = await until('the upload in the view', async () =>
      (await shown()).find((r) => r.assetId === first.assetId),
    );
    assert.equal(row.item.label, 'photo.png');
    assert.match(String(row.item.description), new RegExp(`^${PNG_1X1.length + 64} B · image/png · [0-9a-f]{12}$`));
    assert.match(String(row.item.contextValue), /^asset:upload:hash:local:png$/);
    assert.equal((row.item.iconPath as vscode.ThemeIcon).id, 'cloud-upload');
    assert.match((row.item.tooltip as vscode.MarkdownString).value, new RegExp(first.hash!));
  });

  test('a second upload of the same file is a dedup hit: no bytes sent, and the view says so', async () => {
    const before = emu.requests.length;
    const uri = vscode.Uri.file(file);
    const [again] = await vscode.commands.executeCommand<UploadOutcome[]>('comfyCloud.uploadAsset', uri, [uri]);
    assert.equal(again?.dedup, true);
    assert.equal(again?.hash, first.hash);
    assert.deepEqual(
      emu.requests.slice(before).filter((r) => r.method === 'POST' && r.path === '/api/v2/assets'),
      [],
      'the bytes were sent again',
    );
    const row = await until('the dedup hit in the view', async () =>
      (await shown()).find(
        (r) => r.assetId === again!.assetId && /already there: no bytes sent/.test(String(r.item.description)),
      ),
    );
    assert.match(String(row.item.contextValue), /^asset:upload:dedup:/);
  });

  test('Copy core/ASSET Reference puts the JSON a workflow needs on the clipboard, and a workflow using it is accepted', async () => {
    const row = (await shown()).find((r) => r.assetId === first.assetId)!;
    const text = await vscode.commands.executeCommand<string>('comfyCloud.copyAssetReference', row.node);
    assert.equal(await vscode.env.clipboard.readText(), text);
    const reference = JSON.parse(text) as unknown;
    assert.deepEqual(reference, {
      __type: 'core/ASSET',
      info: { id: first.assetId, hash: first.hash, file_path: 'photo.png' },
    });
    // Held at its first node (LoadImage) until canceled below: it runs, whatever the machine's speed.
    emu.holdNodes({});
    let job: { id: string };
    try {
      const res = await fetch(`${emu.baseUrl}/api/v2/jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          workflow: {
            '1': { class_type: 'LoadImage', inputs: { image: reference } },
            '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'ref' } },
          },
        }),
      });
      const body = await res.text();
      assert.equal(res.status, 201, body);
      job = JSON.parse(body) as { id: string };
      await emu.whenHeld((n) => n.jobId === job.id);

      // While that job runs, the asset is in use: Delete is refused with asset_in_use, and the asset stays.
      const outcome = await vscode.commands.executeCommand<string>('comfyCloud.deleteAsset', row.node, {
        confirmed: true,
      });
      assert.equal(outcome, 'in_use');
      assert.ok(
        (await shown()).some((r) => r.assetId === first.assetId),
        'an asset in use left the view',
      );
      // Cancel it and wait (each step a request, bounded) until it has ended: the asset is free again.
      await fetch(`${emu.baseUrl}/api/v2/jobs/${job.id}/cancel`, { method: 'POST' });
    } finally {
      emu.holdNodes(null);
    }
    let status = '';
    for (let i = 0; i < 2000 && !['succeeded', 'failed', 'canceled', 'expired'].includes(status); i++) {
      status = ((await (await fetch(`${emu.baseUrl}/api/v2/jobs/${job.id}`)).json()) as { status: string }).status;
    }
    assert.equal(status, 'canceled');
  });

  test("Copy Asset Id copies the id; Download saves the asset's bytes to the chosen file", async () => {
    const row = (await shown()).find((r) => r.assetId === first.assetId)!;
    assert.equal(await vscode.commands.executeCommand<string>('comfyCloud.copyAssetId', row.node), first.assetId);
    assert.equal(await vscode.env.clipboard.readText(), first.assetId);
    const target = path.join(dir, 'downloaded.png');
    const saved = await vscode.commands.executeCommand<string>('comfyCloud.downloadAsset', row.node, target);
    assert.equal(saved, target);
    assert.deepEqual(fs.readFileSync(target), fs.readFileSync(file));
  });

  test('the outputs of a job submitted here show in the Assets view as outputs, with no refresh', async () => {
    const folder = vscode.workspace.workspaceFolders?.[0];
    assert.ok(folder, 'no workspace folder is open');
    const result = await vscode.commands.executeCommand<{ jobId?: string; status: string }>(
      'comfyCloud.submitWorkflow',
      vscode.Uri.joinPath(folder.uri, 'invert.json'),
    );
    assert.equal(result?.status, 'succeeded');
    const job = (await (await fetch(`${emu.baseUrl}/api/v2/jobs/${result.jobId}`)).json()) as {
      outputs: { id: string; name: string }[];
    };
    const output = job.outputs[0]!;
    const row = await until('the output in the view', async () => (await shown()).find((r) => r.assetId === output.id));
    assert.equal(row.item.label, output.name);
    assert.match(String(row.item.contextValue), /^asset:output(:|$)/);
    assert.match((row.item.tooltip as vscode.MarkdownString).value, new RegExp(`Output of job: \`${result.jobId}\``));
  });

  test('Delete removes the asset from the server and the item leaves the view', async () => {
    // The job that used it has ended (canceled): deleting is allowed now.
    const row = (await shown()).find((r) => r.assetId === first.assetId)!;
    assert.equal(
      await vscode.commands.executeCommand<string>('comfyCloud.deleteAsset', row.node, { confirmed: true }),
      'deleted',
    );
    assert.equal((await fetch(`${emu.baseUrl}/api/v2/assets/${first.assetId}`)).status, 404);
    await until('the asset gone from the view', async () =>
      (await shown()).some((r) => r.assetId === first.assetId) ? undefined : true,
    );
    assert.equal(
      await extension.assetsView.provider.store.get(extension.assetsView.provider.activeBaseUrl!, first.assetId!),
      undefined,
      'the record is still stored',
    );
  });
  test('a record remembered while the view reads the store is kept: the read lists again (no record lost to a stale listing)', async () => {
    const provider = extension.assetsView.provider;
    const store = provider.store;
    const list = store.list;
    let listed!: () => void;
    const listing = new Promise<void>((resolve) => (listed = resolve));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let lists = 0;
    // The first listing of the refresh below is taken, then held until a record was remembered.
    store.list = async function (this: typeof store, ...args: Parameters<typeof list>) {
      const records = await list.apply(this, args);
      if (++lists === 1) {
        listed();
        await held;
      }
      return records;
    };
    try {
      const refreshing = provider.refresh();
      await listing;
      const record = outputRecord(
        provider.activeBaseUrl ?? emu.baseUrl,
        'job-raced',
        { id: `raced-${randomBytes(4).toString('hex')}`, name: 'raced.png' },
        null,
        'vscode',
      );
      await provider.remember(record);
      release();
      await refreshing;
      assert.ok(
        provider.recordOf(record.assetId),
        'the record remembered during the read was dropped by its stale listing',
      );
      assert.ok(lists >= 2, 'the read did not list again');
      await provider.forget(record);
    } finally {
      store.list = list;
      release();
    }
  });
});
