// First-run guidance and connection polish: the readiness the welcome views follow, the stale "Local
// emulator" connection, the periodic health probe (manual clock, no sleeps), the end-of-job notice and its decision,
// and the manifest's welcome views and walkthrough.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  HealthSchedule,
  connectionReadiness,
  isStaleEmulatorConnection,
  needsApiKey,
  resolveConnection,
  type ActiveConnection,
  type ReadinessFacts,
} from '../../src/core/connection';
import { ManualClock } from '../../src/core';
import { jobEndNotice, shouldNotifyJobEnd } from '../../src/core/views';
import { untranslated } from '../../src/core/util';

const LIST = [
  { name: 'Cloud', surface: 'cloud', baseUrl: 'https://cloud.example' },
  { name: 'Demo', surface: 'deployment', deploymentId: 'demo-1' },
  { name: 'Laptop', surface: 'companion', baseUrl: 'http://127.0.0.1:8189' },
  { name: 'Local emulator', surface: 'emulator', baseUrl: 'http://127.0.0.1:40123' },
  { name: 'My emulator', surface: 'emulator', baseUrl: 'http://127.0.0.1:40124' },
];
const DEFAULT_URL = 'http://127.0.0.1:8189';
const conn = (name: string, defaultUrl = DEFAULT_URL): ActiveConnection => resolveConnection(LIST, name, defaultUrl);
const facts = (over: Partial<ReadinessFacts>): ReadinessFacts => ({
  active: conn('Laptop'),
  hasKey: false,
  configured: true,
  health: 'ok',
  staleEmulator: false,
  ...over,
});

/** Lets every settled promise's callbacks run (the schedule's waits resolve in microtasks after `advance`). */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("guide: the readiness of the active connection (the welcome views' context key)", () => {
  it('the managed cloud and a deployment need an API key; a companion, an emulator and a loopback default do not', () => {
    assert.equal(needsApiKey(conn('Cloud')), true);
    assert.equal(needsApiKey(conn('Demo')), true);
    assert.equal(needsApiKey(conn('Laptop')), false);
    assert.equal(needsApiKey(conn('Local emulator')), false);
    assert.equal(needsApiKey(conn('')), false);
    assert.equal(needsApiKey(conn('', 'https://cloud.example')), true);
  });

  it('settings that do not resolve to a connection are "invalid"', () => {
    assert.equal(connectionReadiness(facts({ active: undefined })), 'invalid');
  });

  it('a cloud connection without a stored key is "noKey", and "ready" once a key is stored', () => {
    assert.equal(connectionReadiness(facts({ active: conn('Cloud'), hasKey: false })), 'noKey');
    assert.equal(connectionReadiness(facts({ active: conn('Cloud'), hasKey: true, health: 'unreachable' })), 'ready');
  });

  it('nothing configured and no companion answering at the default address is "unconfigured"; one answering is "ready"', () => {
    assert.equal(
      connectionReadiness(facts({ active: conn(''), configured: false, health: 'unreachable' })),
      'unconfigured',
    );
    assert.equal(
      connectionReadiness(facts({ active: conn(''), configured: false, health: undefined })),
      'unconfigured',
    );
    assert.equal(connectionReadiness(facts({ active: conn(''), configured: false, health: 'ok' })), 'ready');
    assert.equal(connectionReadiness(facts({ active: conn(''), configured: true, health: 'unreachable' })), 'ready');
  });

  it('a stale emulator connection is "stale" before anything else', () => {
    assert.equal(connectionReadiness(facts({ active: conn('Local emulator'), staleEmulator: true })), 'stale');
  });
});

describe('guide: the "Local emulator" connection of an earlier window is stale', () => {
  it('stale: the emulator connection, no child of this extension at its URL, and its URL unreachable', () => {
    assert.equal(isStaleEmulatorConnection(conn('Local emulator'), 'Local emulator', undefined, 'unreachable'), true);
    assert.equal(
      isStaleEmulatorConnection(conn('Local emulator'), 'Local emulator', 'http://127.0.0.1:50000', 'unreachable'),
      true,
    );
  });
  it("not stale while this extension's child serves it, or while its URL answers (another window's emulator)", () => {
    assert.equal(
      isStaleEmulatorConnection(conn('Local emulator'), 'Local emulator', 'http://127.0.0.1:40123', 'unreachable'),
      false,
    );
    assert.equal(isStaleEmulatorConnection(conn('Local emulator'), 'Local emulator', undefined, 'ok'), false);
    assert.equal(isStaleEmulatorConnection(conn('Local emulator'), 'Local emulator', undefined, undefined), false);
  });
  it('never stale: an emulator connection the user named, another kind, or no connection', () => {
    assert.equal(isStaleEmulatorConnection(conn('My emulator'), 'Local emulator', undefined, 'unreachable'), false);
    assert.equal(isStaleEmulatorConnection(conn('Laptop'), 'Local emulator', undefined, 'unreachable'), false);
    assert.equal(isStaleEmulatorConnection(undefined, 'Local emulator', undefined, 'unreachable'), false);
  });
});

describe('guide: the periodic health probe (manual clock)', () => {
  function schedule(focused = true): { s: HealthSchedule; clock: ManualClock; probes: number[] } {
    const clock = new ManualClock(1_000_000);
    const probes: number[] = [];
    const s = new HealthSchedule({
      clock,
      intervalMs: 60_000,
      focused,
      probe: async () => void probes.push(clock.now()),
    });
    return { s, clock, probes };
  }

  it('re-probes every interval after the last probe while the window has the focus', async () => {
    const { s, clock, probes } = schedule();
    s.start();
    clock.advance(59_999);
    await settle();
    assert.deepEqual(probes, []);
    clock.advance(1);
    await settle();
    assert.deepEqual(probes, [1_060_000]);
    clock.advance(60_000);
    await settle();
    assert.deepEqual(probes, [1_060_000, 1_120_000]);
    s.dispose();
  });

  it('makes no probe while the window has no focus', async () => {
    const { s, clock, probes } = schedule();
    s.start();
    s.setFocused(false);
    clock.advance(10 * 60_000);
    await settle();
    assert.deepEqual(probes, []);
    s.dispose();
  });

  it('probes at once when the focus returns after a period or more, then every interval again', async () => {
    const { s, clock, probes } = schedule();
    s.start();
    s.setFocused(false);
    clock.advance(5 * 60_000);
    s.setFocused(true);
    await settle();
    assert.deepEqual(probes, [1_300_000]);
    clock.advance(60_000);
    await settle();
    assert.deepEqual(probes, [1_300_000, 1_360_000]);
    s.dispose();
  });

  it('a focus regained within the period waits for the rest of it (no extra probe)', async () => {
    const { s, clock, probes } = schedule();
    s.start();
    s.setFocused(false);
    clock.advance(20_000);
    s.setFocused(true);
    await settle();
    assert.deepEqual(probes, []);
    clock.advance(40_000);
    await settle();
    assert.deepEqual(probes, [1_060_000]);
    s.dispose();
  });

  it('a probe made elsewhere (a switch, a new key) restarts the period', async () => {
    const { s, clock, probes } = schedule();
    s.start();
    clock.advance(50_000);
    s.noteProbe();
    clock.advance(50_000);
    await settle();
    assert.deepEqual(probes, []);
    clock.advance(10_000);
    await settle();
    assert.deepEqual(probes, [1_110_000]);
    s.dispose();
  });

  it('a window opened without the focus makes its first periodic probe when the focus comes', async () => {
    const { s, clock, probes } = schedule(false);
    s.start();
    clock.advance(120_000);
    await settle();
    assert.deepEqual(probes, []);
    s.setFocused(true);
    await settle();
    assert.deepEqual(probes, [1_120_000]);
    s.dispose();
  });

  it('a failing probe does not stop the schedule; disposing does', async () => {
    const clock = new ManualClock(0);
    let calls = 0;
    const s = new HealthSchedule({
      clock,
      intervalMs: 1_000,
      probe: () => Promise.reject(new Error(`probe ${++calls} failed`)),
    });
    s.start();
    clock.advance(1_000);
    await settle();
    clock.advance(1_000);
    await settle();
    assert.equal(calls, 2);
    s.dispose();
    clock.advance(5_000);
    await settle();
    assert.equal(calls, 2);
  });
});

describe('guide: the end-of-job notification', () => {
  it("a job's end is told only when the setting is on, the job is this window's, and no view shows it already", () => {
    assert.equal(shouldNotifyJobEnd({ enabled: true, submittedHere: true }), true);
    assert.equal(shouldNotifyJobEnd({ enabled: false, submittedHere: true }), false);
    assert.equal(shouldNotifyJobEnd({ enabled: true, submittedHere: false }), false);
    assert.equal(shouldNotifyJobEnd({ enabled: true, submittedHere: true, shownElsewhere: true }), false);
  });

  it('succeeded: an information with the outputs saved, "Open Output" (when one was saved) and "Show Job"', () => {
    assert.deepEqual(jobEndNotice({ jobId: 'abcdef1234567', status: 'succeeded', files: 1 }, untranslated), {
      severity: 'info',
      message: 'Comfy Cloud: job abcdef12 succeeded — 1 output saved.',
      actions: ['openOutput', 'showJob'],
    });
    assert.deepEqual(jobEndNotice({ jobId: 'j2', status: 'succeeded', files: 0 }, untranslated).actions, ['showJob']);
    // Named by its workflow when this machine remembers it (the notices after a reload too).
    assert.equal(
      jobEndNotice({ jobId: '8de124e6aa', status: 'succeeded', files: 1, workflow: 'invert.json' }, untranslated)
        .message,
      'Comfy Cloud: invert.json (job 8de124e6) succeeded — 1 output saved.',
    );
    assert.match(jobEndNotice({ jobId: 'j3', status: 'succeeded', files: 3 }, untranslated).message, /3 outputs saved/);
  });

  it('failed: an error with the error\'s code, message and node, and "Show Job"', () => {
    const notice = jobEndNotice(
      {
        jobId: 'job-failed-1',
        status: 'failed',
        files: 0,
        error: { code: 'node_error', message: 'out of memory', nodeId: '7', classType: 'KSampler' },
      },
      untranslated,
    );
    assert.equal(notice.severity, 'error');
    assert.equal(notice.message, 'Comfy Cloud: job job-fail failed at node 7 (KSampler): out of memory [node_error]');
    assert.deepEqual(notice.actions, ['showJob']);
    assert.equal(
      jobEndNotice({ jobId: 'j', status: 'failed', files: 0, error: null }, untranslated).message,
      'Comfy Cloud: job j failed.',
    );
  });

  it('canceled: a plain information without buttons; a watch that gave up: a warning with "Show Job"', () => {
    assert.deepEqual(jobEndNotice({ jobId: 'j', status: 'canceled', files: 0 }, untranslated), {
      severity: 'info',
      message: 'Comfy Cloud: job j was canceled.',
      actions: [],
    });
    const notice = jobEndNotice({ jobId: 'j', status: 'running', files: 0 }, untranslated);
    assert.equal(notice.severity, 'warning');
    assert.deepEqual(notice.actions, ['showJob']);
  });

  it('the words go through the translate function', () => {
    const seen: string[] = [];
    jobEndNotice({ jobId: 'j', status: 'canceled', files: 0 }, (m, ...a) => (seen.push(m), untranslated(m, ...a)));
    assert.deepEqual(seen, ['job {0}', 'Comfy Cloud: {0} was canceled.']);
  });
});

describe("guide: the manifest's welcome views and walkthrough", () => {
  const root = path.resolve(__dirname, '../../..');
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const nls = JSON.parse(fs.readFileSync(path.join(root, 'package.nls.json'), 'utf8')) as Record<string, string>;
  const constants = fs.readFileSync(path.join(root, 'src/extension/platform/constants.ts'), 'utf8');
  const text = (value: string): string =>
    value.replace(/^%(.+)%$/, (_, key: string) => nls[key] ?? assert.fail(`no ${key} in package.nls.json`));

  it('every %key% in package.json has its English text in package.nls.json', () => {
    const keys = [...JSON.stringify(pkg).matchAll(/"%([\w.-]+)%"/g)].map((m) => m[1]!);
    assert.ok(keys.length > 0);
    for (const key of keys) assert.ok(key in nls, key);
  });

  it('the Jobs view has a welcome for an unusable connection (emulator and sample FIRST, then connect and key: what needs no account shows above the fold) and one for no job (sample, submit)', () => {
    const welcomes = pkg.contributes.viewsWelcome as { view: string; contents: string; when: string }[];
    const key = /connectionState: '([^']+)'/.exec(constants)![1]!;
    const none = welcomes.find((w) => w.view === 'comfyCloud.jobs' && w.when.includes(`${key} != ready`));
    const noJob = welcomes.find((w) => w.view === 'comfyCloud.jobs' && w.when === `${key} == ready`);
    assert.ok(none && noJob);
    const commands = (s: string): string[] => [...text(s).matchAll(/\]\(command:([\w.]+)\)/g)].map((m) => m[1]!);
    assert.deepEqual(commands(none.contents).slice(0, 4), [
      'comfyCloud.startEmulator',
      'comfyCloud.openSample',
      'comfyCloud.addConnection',
      'comfyCloud.setApiKey',
    ]);
    // One short line before the first two buttons: in a 900-pixel-high window they show without scrolling.
    const before = text(none.contents).split('[')[0]!;
    assert.ok(
      before.split('\n').filter(Boolean).length === 1 && before.length <= 120,
      `the text above the buttons: ${before}`,
    );
    assert.deepEqual(commands(noJob.contents), ['comfyCloud.openSample', 'comfyCloud.submitWorkflow']);
    const contributed = new Set((pkg.contributes.commands as { command: string }[]).map((c) => c.command));
    for (const c of [...commands(none.contents), ...commands(noJob.contents)])
      assert.ok(contributed.has(c) || c.startsWith('workbench.'), c);
  });

  it('the walkthrough "Get Started with Comfy Cloud" has the same steps, each with its media and completion events', () => {
    const id = /WALKTHROUGH_ID = '([^']+)'/.exec(constants)![1];
    const walkthrough = (
      pkg.contributes.walkthroughs as {
        id: string;
        title: string;
        steps: { id: string; media: { markdown?: string; svg?: string }; completionEvents: string[] }[];
      }[]
    ).find((w) => w.id === id);
    assert.ok(walkthrough);
    assert.equal(text(walkthrough.title), 'Get Started with Comfy Cloud');
    const events = walkthrough.steps.flatMap((s) => s.completionEvents);
    for (const e of [
      'onCommand:comfyCloud.addConnection',
      'onCommand:comfyCloud.setApiKey',
      'onCommand:comfyCloud.startEmulator',
      'onCommand:comfyCloud.openSample',
      'onCommand:comfyCloud.submitWorkflow',
      'onSettingChanged:comfyCloud.notifyOnJobEnd',
    ]) {
      assert.ok(events.includes(e), e);
    }
    assert.ok(events.some((e) => e.startsWith('onContext:comfyCloud.connectionState == ready')));
    for (const step of walkthrough.steps) {
      const media = step.media.markdown ?? step.media.svg;
      assert.ok(
        media && media.startsWith('media/walkthrough/') && fs.existsSync(path.join(root, media)),
        `${step.id}: ${media}`,
      );
      assert.ok(step.completionEvents.length > 0, step.id);
    }
  });

  it('comfyCloud.notifyOnJobEnd is a boolean, on by default, not a workspace setting', () => {
    const setting = pkg.contributes.configuration.properties['comfyCloud.notifyOnJobEnd'];
    assert.equal(setting.type, 'boolean');
    assert.equal(setting.default, true);
    assert.ok(['application', 'machine'].includes(setting.scope), setting.scope);
  });
});
