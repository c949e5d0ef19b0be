// Add Connection in a real VS Code extension host: the choices it offers (the public addresses of the v2 OpenAPI
// document's `servers`: Comfy Cloud at https://cloud.comfy.org, a serverless deployment at its own host
// https://<id>.run.comfy.app, the self-hosted companion, the local emulator) and what each writes to the user's
// settings. The quick pick and the input boxes are answered by stand-ins for `vscode.window.showQuickPick` and
// `showInputBox` that record what they were shown; a person's Enter on a prefilled box returns its value. The settings
// changed here are restored at the end.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { activateExtension } from './workspace';
import { until as untilEvent } from './until';
import type { ComfyCloudApi } from '../../src/extension/api';

/** How long a state may take to be reached (ms): a deadline, not a wait. */
const DEADLINE_MS = 90_000; // generous: a loaded machine is slow, never a reason to fail
const KEYS = ['connections', 'activeConnection', 'deploymentDomain', 'baseUrl'];

type Item = vscode.QuickPickItem & { surface?: string };
/** One answer of the input-box stand-in: given the box's options, what the person typed (undefined: Escape). */
type Answer = (options: vscode.InputBoxOptions) => string | undefined | Promise<string | undefined>;

const config = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('comfyCloud');
const userValue = <T>(key: string): T | undefined => config().inspect<T>(key)?.globalValue;

suite('Add Connection offers the public addresses, and writes what was chosen', () => {
  let extension: ComfyCloudApi;
  const saved: Record<string, unknown> = {};
  const window = vscode.window as { -readonly [K in keyof typeof vscode.window]: (typeof vscode.window)[K] };
  const original = { showQuickPick: window.showQuickPick, showInputBox: window.showInputBox };
  /** What the quick picks were shown, in order. */
  let picks: Item[][] = [];
  /** The options of the input boxes shown, in order. */
  let boxes: vscode.InputBoxOptions[] = [];

  /** Answers the next quick pick with `choose(items)` and the next input boxes with `answers`, in order. */
  function script(choose: (items: Item[]) => Item | undefined, ...answers: Answer[]): void {
    picks = [];
    boxes = [];
    window.showQuickPick = (async (items: readonly Item[] | Thenable<readonly Item[]>) => {
      const shown = [...(await items)];
      picks.push(shown);
      return choose(shown);
    }) as unknown as typeof vscode.window.showQuickPick;
    window.showInputBox = (async (options?: vscode.InputBoxOptions) => {
      boxes.push(options ?? {});
      const answer = answers.shift();
      assert.ok(answer, `an input box was not expected: ${options?.prompt}`);
      return answer(options ?? {});
    }) as typeof vscode.window.showInputBox;
  }
  /** Enter on a prefilled box: its value. */
  const enter: Answer = (options) => options.value;
  const bySurface = (surface: string) => (items: Item[]) => items.find((i) => i.surface === surface);

  suiteSetup(async () => {
    extension = await activateExtension();
    for (const key of KEYS) saved[key] = userValue(key);
    await config().update('connections', [], vscode.ConfigurationTarget.Global);
    await config().update('activeConnection', '', vscode.ConfigurationTarget.Global);
  });

  teardown(() => {
    window.showQuickPick = original.showQuickPick;
    window.showInputBox = original.showInputBox;
  });

  suiteTeardown(async () => {
    window.showQuickPick = original.showQuickPick;
    window.showInputBox = original.showInputBox;
    for (const key of KEYS) await config().update(key, saved[key], vscode.ConfigurationTarget.Global);
  });

  test('rule: the choices are Comfy Cloud at https://cloud.comfy.org, a deployment at https://<id>.run.comfy.app, the companion at http://127.0.0.1:8189, and the local emulator', async () => {
    script(() => undefined);
    assert.equal(await vscode.commands.executeCommand('comfyCloud.addConnection'), false);
    assert.equal(picks.length, 1);
    const shown = picks[0]!.map((i) => ({ surface: i.surface, label: i.label, description: i.description }));
    assert.deepEqual(shown.slice(0, 2), [
      { surface: 'cloud', label: '$(cloud) Comfy Cloud', description: 'https://cloud.comfy.org' },
      { surface: 'deployment', label: '$(rocket) Serverless deployment', description: 'https://<id>.run.comfy.app' },
    ]);
    assert.equal(shown[2]!.surface, 'companion');
    // The running companion's address when one is found from its state file, else its default one.
    assert.match(shown[2]!.description ?? '', /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.deepEqual(shown[3], {
      surface: 'emulator',
      label: '$(server-process) Local emulator',
      description: extension.emulator.baseUrl ?? 'Start Local Emulator',
    });
    assert.equal(shown.length, 5, 'and the ComfyUI server (comfyui.test.ts)');
    assert.deepEqual(userValue('connections'), [], 'a cancelled Add Connection wrote nothing');
  });

  test('rule: Comfy Cloud needs no typing: Enter on the prefilled address and name writes {name: "Comfy Cloud", surface: "cloud", baseUrl: "https://cloud.comfy.org"}, made active', async () => {
    // The cloud always needs a key: asked last, in a password input (Escape leaves it for later).
    script(bySurface('cloud'), enter, enter, () => undefined);
    assert.equal(await vscode.commands.executeCommand('comfyCloud.addConnection'), true);
    assert.equal(boxes[0]!.value, 'https://cloud.comfy.org');
    assert.equal(boxes[1]!.value, 'Comfy Cloud');
    assert.equal(boxes.length, 3, 'the API key was not asked');
    assert.equal(boxes[2]!.password, true);
    assert.match(boxes[2]!.prompt ?? '', /API key for https:\/\/cloud\.comfy\.org/);
    assert.deepEqual(userValue('connections'), [
      { name: 'Comfy Cloud', surface: 'cloud', baseUrl: 'https://cloud.comfy.org' },
    ]);
    assert.equal(userValue('activeConnection'), 'Comfy Cloud');
    assert.deepEqual(extension.config.surface(), {
      kind: 'cloud',
      baseUrl: 'https://cloud.comfy.org',
      origin: 'https://cloud.comfy.org',
    });
  });

  test('rule: a deployment by its id: the id is checked as a DNS label, {surface: "deployment", deploymentId} is written, and it is reached at https://<id>.run.comfy.app (stg.run.comfy.app with comfyCloud.deploymentDomain)', async () => {
    let refused: unknown;
    let accepted: unknown;
    script(
      bySurface('deployment'),
      async (options) => {
        refused = await options.validateInput?.('Dep_1');
        accepted = await options.validateInput?.('dep-1');
        return 'dep-1';
      },
      enter,
      () => undefined,
    );
    assert.equal(await vscode.commands.executeCommand('comfyCloud.addConnection'), true);
    assert.match(String(refused), /lowercase DNS label/);
    assert.deepEqual(accepted, {
      message: 'Reached at https://dep-1.run.comfy.app',
      severity: vscode.InputBoxValidationSeverity.Info,
    });
    assert.equal(boxes[1]!.value, 'dep-1');
    const written = userValue<{ name: string }[]>('connections') ?? [];
    assert.deepEqual(
      written.find((c) => c.name === 'dep-1'),
      { name: 'dep-1', surface: 'deployment', deploymentId: 'dep-1' },
    );
    assert.equal(userValue('activeConnection'), 'dep-1');
    assert.deepEqual(extension.config.surface(), {
      kind: 'deployment',
      baseUrl: 'https://dep-1.run.comfy.app',
      origin: 'https://dep-1.run.comfy.app',
    });
    await config().update('deploymentDomain', 'stg.run.comfy.app', vscode.ConfigurationTarget.Global);
    assert.equal(extension.config.surface().baseUrl, 'https://dep-1.stg.run.comfy.app');
    // The connection picker shows the same address.
    script(() => undefined);
    await vscode.commands.executeCommand('comfyCloud.switchConnection');
    const item = picks[0]!.find((i) => / dep-1$|^dep-1$/.test(i.label));
    assert.equal(item?.description, 'https://dep-1.stg.run.comfy.app');
    await config().update('deploymentDomain', undefined, vscode.ConfigurationTarget.Global);
  });

  test('rule: a deployment written in the old form (a cloud baseUrl an earlier version put /deployment/<id> under) reaches its own host, and a notification says so once', async () => {
    const before = extension.legacyNoticesShown.length;
    await config().update(
      'connections',
      [{ name: 'Old', surface: 'deployment', baseUrl: 'https://cloud.example', deploymentId: 'old-1' }],
      vscode.ConfigurationTarget.Global,
    );
    await config().update('activeConnection', 'Old', vscode.ConfigurationTarget.Global);
    await untilEvent(
      'the old-form notice',
      [extension.onDidShowLegacyNotice],
      () => extension.legacyNoticesShown.length > before,
      DEADLINE_MS,
    );
    assert.deepEqual(extension.legacyNoticesShown.slice(before), ['Old https://cloud.example/deployment/old-1']);
    assert.equal(extension.config.surface().baseUrl, 'https://old-1.run.comfy.app');
    // Away and back: not again.
    await config().update('activeConnection', '', vscode.ConfigurationTarget.Global);
    await untilEvent(
      'the default connection',
      [extension.status.onDidChange],
      () => extension.status.connectionName === 'Default',
      DEADLINE_MS,
    );
    await config().update('activeConnection', 'Old', vscode.ConfigurationTarget.Global);
    await untilEvent(
      'the old connection again',
      [extension.status.onDidChange],
      () => extension.status.connectionName === 'Old',
      DEADLINE_MS,
    );
    assert.equal(extension.legacyNoticesShown.length, before + 1, 'the notice was shown again');
  });
});
