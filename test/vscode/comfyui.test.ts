// A ComfyUI server as a connection, in a real VS Code extension host: the "ComfyUI server" choice of Add Connection,
// the start-up offer of a ComfyUI found running (pointed here at a tiny loopback server answering /system_stats,
// /queue and /history as ComfyUI does: ComfyUI server API (observed)), the status bar and the quick pick naming its
// API, "Open in ComfyUI" (the server's base URL handed to the browser), and the Assets view of a connection without
// assets. Dialogs and the browser are stand-ins that record what they were given. Settings are restored at the end.
import * as assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as vscode from 'vscode';
import { activateExtension } from './workspace';
import { until } from './until';
import type { ComfyCloudApi } from '../../src/extension/api';
import { ComfyUIOffer } from '../../src/extension/connection/comfyuiOffer';

const KEYS = ['connections', 'activeConnection', 'baseUrl'];
const config = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('comfyCloud');
const userValue = <T>(key: string): T | undefined => config().inspect<T>(key)?.globalValue;

type Item = vscode.QuickPickItem & { surface?: string; api?: string };
type Writable<T> = { -readonly [K in keyof T]: T[K] };

/** A loopback server answering as a ComfyUI server does (an empty queue and history); anything else 404. */
async function startComfyUI(): Promise<{ url: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const bodies: Record<string, unknown> = {
    '/system_stats': { system: { os: 'posix', comfyui_version: '0.3.40' }, devices: [] },
    '/queue': { queue_running: [], queue_pending: [] },
    '/history': {},
  };
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0]!;
    seen.push(`${req.method} ${path}`);
    const body = bodies[path];
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body ?? { error: 'not found' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A globalState stand-in for an offer of its own. */
class MemoryMemento implements vscode.Memento {
  private readonly values = new Map<string, unknown>();
  keys(): readonly string[] {
    return [...this.values.keys()];
  }
  get<T>(key: string, fallback?: T): T | undefined {
    return this.values.has(key) ? (this.values.get(key) as T) : fallback;
  }
  update(key: string, value: unknown): Thenable<void> {
    this.values.set(key, value);
    return Promise.resolve();
  }
}

suite('ComfyUI server as a connection', () => {
  let extension: ComfyCloudApi;
  let comfy: Awaited<ReturnType<typeof startComfyUI>>;
  const saved: Record<string, unknown> = {};
  const window = vscode.window as Writable<typeof vscode.window>;
  const env = vscode.env as Writable<typeof vscode.env>;
  const original = {
    showQuickPick: window.showQuickPick,
    showInputBox: window.showInputBox,
    showInformationMessage: window.showInformationMessage,
    openExternal: env.openExternal,
  };
  /** The information messages shown, and their buttons. */
  let infos: { message: string; items: string[] }[] = [];
  /** The URIs handed to the browser. */
  let opened: string[] = [];

  /** Answers information messages with the button `choose` picks (undefined: closed). */
  function answerInfos(choose: (items: string[]) => string | undefined): void {
    infos = [];
    window.showInformationMessage = (async (message: string, ...rest: unknown[]) => {
      const items = rest.filter((r): r is string => typeof r === 'string');
      infos.push({ message, items });
      return choose(items);
    }) as typeof vscode.window.showInformationMessage;
  }

  suiteSetup(async () => {
    extension = await activateExtension();
    comfy = await startComfyUI();
    for (const key of KEYS) saved[key] = userValue(key);
    await config().update('connections', [], vscode.ConfigurationTarget.Global);
    await config().update('activeConnection', '', vscode.ConfigurationTarget.Global);
    opened = [];
    env.openExternal = (async (uri: vscode.Uri) => {
      opened.push(uri.toString(true));
      return true;
    }) as typeof vscode.env.openExternal;
  });

  teardown(() => {
    window.showQuickPick = original.showQuickPick;
    window.showInputBox = original.showInputBox;
    window.showInformationMessage = original.showInformationMessage;
  });

  suiteTeardown(async () => {
    window.showQuickPick = original.showQuickPick;
    window.showInputBox = original.showInputBox;
    window.showInformationMessage = original.showInformationMessage;
    env.openExternal = original.openExternal;
    for (const key of KEYS) await config().update(key, saved[key], vscode.ConfigurationTarget.Global);
    await comfy?.close();
  });

  test('rule: Add Connection offers "ComfyUI server" with http://127.0.0.1:8188 prefilled; an address and Enter write {name: "ComfyUI", surface: "companion", baseUrl, api: "comfyui"} with no key asked, and the quick pick names its API', async () => {
    let shown: Item[] = [];
    const boxes: vscode.InputBoxOptions[] = [];
    window.showQuickPick = (async (items: readonly Item[] | Thenable<readonly Item[]>) => {
      shown = [...(await items)];
      return shown.find((i) => i.api === 'comfyui');
    }) as unknown as typeof vscode.window.showQuickPick;
    // The address typed is the stand-in's, not the prefilled 8188: a ComfyUI really running there on the test
    // machine would otherwise become the active connection, and its jobs the Jobs view's, for the suites after this.
    window.showInputBox = (async (options?: vscode.InputBoxOptions) => {
      boxes.push(options ?? {});
      return boxes.length === 1 ? comfy.url : options?.value;
    }) as typeof vscode.window.showInputBox;
    assert.equal(await vscode.commands.executeCommand('comfyCloud.addConnection'), true);
    const choice = shown.find((i) => i.api === 'comfyui');
    assert.deepEqual(
      { surface: choice?.surface, label: choice?.label, description: choice?.description },
      { surface: 'companion', label: '$(server-environment) ComfyUI server', description: 'http://127.0.0.1:8188' },
    );
    assert.equal(boxes.length, 2, 'the address and the name: no key');
    assert.equal(boxes[0]!.value, 'http://127.0.0.1:8188');
    assert.match(String(await boxes[0]!.validateInput?.('not a url')), /./, 'the address is validated as the others');
    assert.equal(boxes[1]!.value, 'ComfyUI');
    assert.deepEqual(userValue('connections'), [
      { name: 'ComfyUI', surface: 'companion', baseUrl: comfy.url, api: 'comfyui' },
    ]);
    assert.equal(userValue('activeConnection'), 'ComfyUI');
    // The connections quick pick names its API.
    window.showQuickPick = (async (items: readonly Item[] | Thenable<readonly Item[]>) => {
      shown = [...(await items)];
      return undefined;
    }) as unknown as typeof vscode.window.showQuickPick;
    await vscode.commands.executeCommand('comfyCloud.switchConnection');
    const item = shown.find((i) => /ComfyUI$/.test(i.label));
    assert.equal(item?.detail, 'companion · ComfyUI server');
    await config().update('connections', [], vscode.ConfigurationTarget.Global);
    await config().update('activeConnection', '', vscode.ConfigurationTarget.Global);
  });

  test('rule: a ComfyUI answering /system_stats is offered once; Add Connection writes it with api comfyui and the status bar names the ComfyUI server', async () => {
    answerInfos((items) => items.find((i) => i === 'Add Connection'));
    assert.equal(await extension.comfyuiOffer.check(comfy.url), 'added');
    assert.deepEqual(infos, [
      {
        message: `Comfy Cloud: A ComfyUI server is running at ${comfy.url}. Add it as a connection?`,
        items: ['Add Connection', 'Not Now'],
      },
    ]);
    assert.ok(comfy.seen.includes('GET /system_stats'), comfy.seen.join(', '));
    assert.deepEqual(userValue('connections'), [
      { name: 'ComfyUI', surface: 'companion', baseUrl: comfy.url, api: 'comfyui' },
    ]);
    assert.equal(userValue('activeConnection'), 'ComfyUI');
    // Once: not offered again (nor while its connection exists).
    assert.equal(await extension.comfyuiOffer.check(comfy.url), 'offered');
    assert.equal(infos.length, 1);
    const status = extension.status;
    const tooltip = (): string =>
      typeof status.item.tooltip === 'string' ? status.item.tooltip : (status.item.tooltip?.value ?? '');
    await until(
      () => `the status bar names the ComfyUI server: ${status.item.text} / ${tooltip()}`,
      [status.onDidChange],
      () => status.connectionName === 'ComfyUI' && tooltip().includes('API: ComfyUI server'),
    );
    assert.match(status.item.text, /ComfyUI/);
    assert.match(status.item.accessibilityInformation?.label ?? '', /ComfyUI server/);
    assert.doesNotMatch(tooltip(), /deprecated/);
    assert.deepEqual(extension.v1NoticesShown, [], 'no deprecation notice');
  });

  test('rule: "Not Now" is remembered: a later check does not probe or ask again; a connection already at the address is never offered', async () => {
    const state = new MemoryMemento();
    const offer = new ComfyUIOffer(extension.config, state, extension.display, extension.log);
    // The connection of the previous test points at the server: known, not probed.
    const before = comfy.seen.length;
    assert.equal(await offer.check(comfy.url), 'known');
    assert.equal(comfy.seen.length, before);
    await config().update('connections', [], vscode.ConfigurationTarget.Global);
    await config().update('activeConnection', '', vscode.ConfigurationTarget.Global);
    answerInfos((items) => items.find((i) => i === 'Not Now'));
    assert.equal(await offer.check(comfy.url), 'notNow');
    assert.equal(infos.length, 1);
    assert.equal(state.get('comfyCloud.comfyuiOfferDeclined'), true);
    const later = new ComfyUIOffer(extension.config, state, extension.display, extension.log);
    const seen = comfy.seen.length;
    assert.equal(await later.check(comfy.url), 'declined');
    assert.equal(comfy.seen.length, seen, 'probed after Not Now');
    assert.equal(infos.length, 1);
    assert.deepEqual(userValue('connections'), []);
  });

  test("rule: Open in ComfyUI opens the active ComfyUI connection's base URL in the browser (no key in it), and refuses on a connection that is not a ComfyUI server", async () => {
    await config().update(
      'connections',
      [
        { name: 'ComfyUI', surface: 'companion', baseUrl: comfy.url, api: 'comfyui' },
        { name: 'Companion', surface: 'companion', baseUrl: 'http://127.0.0.1:8189' },
      ],
      vscode.ConfigurationTarget.Global,
    );
    await config().update('activeConnection', 'ComfyUI', vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('comfyCloud.setApiKey', 'sk-comfyui-secret');
    opened = [];
    assert.equal(await vscode.commands.executeCommand('comfyCloud.openInComfyUI'), true);
    assert.deepEqual(
      opened.map((u) => u.replace(/\/$/, '')),
      [comfy.url],
    );
    assert.doesNotMatch(opened[0]!, /sk-comfyui-secret/);
    await vscode.commands.executeCommand('comfyCloud.clearApiKey');
    await config().update('activeConnection', 'Companion', vscode.ConfigurationTarget.Global);
    const errors: string[] = [];
    const sub = extension.display.onDidShow((n) => n.severity === 'error' && errors.push(n.message));
    try {
      assert.equal(await vscode.commands.executeCommand('comfyCloud.openInComfyUI'), false);
    } finally {
      sub.dispose();
    }
    assert.equal(opened.length, 1, 'opened a server that is not ComfyUI');
    assert.match(errors[0] ?? '', /not a ComfyUI server/);
  });

  test('rule: the Assets view of a connection without assets (capabilities.assets false) says so in its welcome; a v2 connection has assets', async () => {
    await config().update('activeConnection', 'ComfyUI', vscode.ConfigurationTarget.Global);
    const provider = extension.assetsView.provider;
    await provider.refresh();
    assert.equal(provider.activeBaseUrl, comfy.url);
    assert.equal(provider.connectionHasAssets, false);
    assert.deepEqual(await provider.model(), []);
    await config().update('activeConnection', 'Companion', vscode.ConfigurationTarget.Global);
    await provider.refresh();
    assert.equal(provider.activeBaseUrl, 'http://127.0.0.1:8189');
    assert.equal(provider.connectionHasAssets, true);
  });
});
