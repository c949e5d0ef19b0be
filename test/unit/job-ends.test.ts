/**
 * The one owner of a remembered job's end (core jobs/jobEnds.ts) and what is shown of what the server does not say,
 * against a loopback server replaying the self-hosted companion's answers (companionServer.ts): a job that ended while
 * no process watched is found at start-up with its outputs downloaded once into its folder, its record terminal and
 * one telling (one batch for several); a job still running is followed to its end; the companion's null times, size 0,
 * progress without node counts and previews without a node read as unknown, never as "not yet", "0 B" or "Node 3 (?)".
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  AbortError,
  ConnectionError,
  JobEnds,
  JobService,
  isTerminalStatus,
  outputBytes,
  recordsToResume,
  type HandledEnd,
} from '../../src/core';
import { StateStore, type JobRecord } from '../../src/core/state';
import { V2Client } from '../../src/core/v2/client';
import { V2JobBackend } from '../../src/core/v2/jobBackend';
import { jobChildren, jobEndsSummary, presentEntry } from '../../src/core/views';
import { untranslated } from '../../src/core/util';
import { monitorJob, monitorPreview, monitorState, monitorStrings } from '../../src/core/views/monitor/monitorPage';
import { initialView, present } from '../../src/core/views/monitor/viewModel';
import { invertWorkflow } from './builders';
import { startCompanion, type Companion } from './companionServer';
import { tempDir } from './tmp';

interface Conn {
  backend: V2JobBackend;
}

/** A job service of the companion, as a process (VS Code or the CLI) builds it; its log lines kept. */
function serviceOf(
  companion: Companion,
  store: StateStore,
  clientName: JobRecord['client'] = 'vscode',
): { service: JobService<Conn>; lines: string[] } {
  const lines: string[] = [];
  const service = new JobService<Conn>({
    clients: {
      identity: async () => companion.origin,
      create: async () => ({ backend: new V2JobBackend(new V2Client({ baseUrl: companion.origin })) }),
    },
    store,
    log: { info: (c, m) => lines.push(`info [${c}] ${m}`), warn: (c, m) => lines.push(`warn [${c}] ${m}`) },
    clientName,
  });
  return { service, lines };
}

/**
 * Job-end owner of `service`: outputs in `<root>/<job id>/`, every telling kept. `jobs`: what it leases and follows
 * through (default the service itself).
 */
function jobEndsOf(
  service: JobService<Conn>,
  store: StateStore,
  root: string,
  jobs: Pick<JobService<Conn>, 'lease' | 'follow'> = service,
): { ends: JobEnds<Conn>; told: HandledEnd[][]; nextTelling: () => Promise<HandledEnd[]> } {
  const told: HandledEnd[][] = [];
  let waiting: ((ends: HandledEnd[]) => void) | undefined;
  const ends = new JobEnds<Conn>({
    jobs,
    store,
    log: { info: () => undefined, warn: () => undefined },
    outputDir: async (jobId) => {
      const dir = path.join(root, jobId);
      await fs.promises.mkdir(dir, { recursive: true });
      return dir;
    },
    tell: (e) => {
      told.push(e);
      waiting?.(e);
    },
  });
  return { ends, told, nextTelling: () => new Promise((resolve) => (waiting = resolve)) };
}

/**
 * Submits through a process's job service and "closes the window" before the job ends: the service is disposed as
 * deactivation disposes it (its watch aborted), the record left with the status it last heard.
 */
async function submitThenGoAway(
  companion: Companion,
  store: StateStore,
  clientName: JobRecord['client'] = 'vscode',
): Promise<string> {
  const { service } = serviceOf(companion, store, clientName);
  const lease = await service.lease();
  let jobId = '';
  const submitted = new Promise<void>((resolve) => {
    void service
      .submit(lease, invertWorkflow(), {
        onSubmitted: (s) => {
          jobId = s.job.id;
          resolve();
        },
      })
      .catch(() => undefined);
  });
  // The record (with the job id) is written before onSubmitted; the window goes away with the job still queued.
  await submitted;
  lease.release();
  service.dispose();
  return jobId;
}

const contentGets = (companion: Companion): number =>
  companion.seen.filter((s) => s.method === 'GET' && /^\/api\/v2\/assets\/[^/]+\/content$/.test(s.path)).length;

describe("job ends: one owner of every remembered job's end (against the companion's answers)", () => {
  let companion: Companion;
  let store: StateStore;
  let root: string;

  beforeEach(async () => {
    companion = await startCompanion();
    store = new StateStore(tempDir('cc-jobends-'));
    root = tempDir('cc-jobends-out-');
  });
  afterEach(async () => {
    await companion.close();
  });

  it('a job that ended while no process watched is read again at start-up: outputs in its folder, record terminal, told once', async () => {
    const jobId = await submitThenGoAway(companion, store);
    assert.notEqual((await store.list()).find((r) => r.jobId === jobId)?.lastStatus, 'succeeded');
    companion.run(jobId);
    companion.finish(jobId);
    // Start-up: a new process's services.
    const { service } = serviceOf(companion, store);
    const { ends, told } = jobEndsOf(service, store, root);
    const found = await ends.resume();
    assert.deepEqual(
      found.map((e) => e.job.id),
      [jobId],
    );
    const file = path.join(root, jobId, `ComfyUI_${jobId.slice(0, 8)}_00001_.png`);
    assert.deepEqual(fs.readFileSync(file), companion.png);
    assert.deepEqual(
      fs.readdirSync(path.join(root, jobId)).filter((f) => !f.startsWith('.')),
      [path.basename(file)],
      'not exactly one file',
    );
    const record = (await store.list()).find((r) => r.jobId === jobId);
    assert.equal(record?.lastStatus, 'succeeded');
    assert.equal(told.length, 1);
    assert.deepEqual(
      told[0]!.map((e) => [e.job.id, e.files]),
      [[jobId, [file]]],
    );
    // A second start-up finds nothing to do: the record is terminal.
    assert.deepEqual(await ends.resume(), []);
    assert.equal(told.length, 1);
    service.dispose();
  });

  it('a reading asked for while one is under way gets the next one: a run that leased before the change never hides a job', async () => {
    const jobId = await submitThenGoAway(companion, store);
    companion.run(jobId);
    companion.finish(jobId);
    const { service } = serviceOf(companion, store);
    // The run under way leased the connection before the settings changed: its lease ends with the old client.
    let abortFirst!: () => void;
    let leases = 0;
    const jobs = {
      lease: () => {
        leases++;
        if (leases > 1) return service.lease();
        return new Promise<never>((_, reject) => (abortFirst = () => reject(new AbortError('the client was rebuilt'))));
      },
      follow: service.follow.bind(service),
    };
    const { ends, told } = jobEndsOf(service, store, root, jobs);
    const first = ends.resume();
    const next = ends.resume();
    assert.equal(ends.resume(), next, 'the calls made during one run do not share the next one');
    abortFirst();
    assert.deepEqual(await first, []);
    assert.deepEqual(
      (await next).map((e) => e.job.id),
      [jobId],
      'the call made during the aborted run did not read the job',
    );
    assert.equal(leases, 2);
    assert.deepEqual(
      told.map((t) => t.map((e) => e.job.id)),
      [[jobId]],
    );
    service.dispose();
  });

  it('several jobs that ended while no process watched are told in one batch (one summary)', async () => {
    const a = await submitThenGoAway(companion, store);
    const b = await submitThenGoAway(companion, store);
    for (const id of [a, b]) {
      companion.run(id);
      companion.finish(id);
    }
    const { service } = serviceOf(companion, store);
    const { ends, told } = jobEndsOf(service, store, root);
    await ends.resume();
    assert.equal(told.length, 1, 'not one telling');
    assert.deepEqual(told[0]!.map((e) => e.job.id).sort(), [a, b].sort());
    const notice = jobEndsSummary(
      told[0]!.map((e) => ({ jobId: e.job.id, status: e.job.status, files: e.files.length })),
      untranslated,
    );
    assert.equal(notice.message, 'Comfy Cloud: 2 jobs ended while VS Code was away: 2 succeeded — 2 outputs saved.');
    service.dispose();
  });

  it('a job still running at start-up is followed to its end, then handled like any end', async () => {
    const jobId = await submitThenGoAway(companion, store);
    companion.run(jobId);
    const { service } = serviceOf(companion, store);
    const { ends, told, nextTelling } = jobEndsOf(service, store, root);
    assert.deepEqual(await ends.resume(), []);
    assert.deepEqual(ends.followed, [`${companion.origin} ${jobId}`]);
    assert.equal(
      (await store.list()).find((r) => r.jobId === jobId)?.lastStatus,
      'running',
      'the record did not learn the status read again',
    );
    const telling = nextTelling();
    companion.finish(jobId);
    await telling;
    assert.deepEqual(
      told.map((t) => t.map((e) => e.job.id)),
      [[jobId]],
    );
    assert.equal(told[0]![0]!.files.length, 1);
    // The record is updated before the end is told.
    assert.equal((await store.list()).find((r) => r.jobId === jobId)?.lastStatus, 'succeeded');
    service.dispose();
  });

  it('an output already complete in the folder is not downloaded again; a job seen ended twice is handled and told once', async () => {
    const { service } = serviceOf(companion, store);
    const { ends, told } = jobEndsOf(service, store, root);
    const lease = await service.lease();
    let accepted!: () => void;
    const submitted = new Promise<void>((resolve) => (accepted = resolve));
    const submitting = service.submit(lease, invertWorkflow(), { onSubmitted: () => accepted() });
    await submitted;
    companion.run();
    companion.finish();
    const { final } = await submitting;
    const first = await ends.ended(companion.origin, final.job, { backend: lease.backend });
    const again = await ends.ended(companion.origin, final.job, { backend: lease.backend });
    assert.equal(again, first);
    assert.equal(told.length, 1);
    assert.equal(contentGets(companion), 1);
    // Another process (a new start-up) finds the file complete: no second copy, no second request.
    const other = jobEndsOf(service, store, root);
    const end = await other.ends.ended(companion.origin, final.job, { backend: lease.backend });
    assert.deepEqual(end.files, first.files);
    assert.equal(contentGets(companion), 1, 'the output was downloaded again');
    assert.deepEqual(fs.readdirSync(path.join(root, final.job.id)).filter((f) => !f.startsWith('.')).length, 1);
    lease.release();
    service.dispose();
  });

  it('step 2: a failed download leaves the record not terminal and tells nothing; the next start-up downloads again, then writes the status', async () => {
    const jobId = await submitThenGoAway(companion, store);
    companion.run(jobId);
    companion.finish(jobId);
    const { service } = serviceOf(companion, store);
    const { ends, told } = jobEndsOf(service, store, root);
    const lease = await service.lease();
    const final = (await lease.backend.get(jobId)).job;
    // The connection breaks off while the outputs are downloaded (a window closed, the network gone).
    const breaking = Object.create(lease.backend) as V2JobBackend;
    breaking.downloadOutputs = () => Promise.reject(new ConnectionError('the download broke off after 10 bytes'));
    const end = await ends.ended(companion.origin, final, { backend: breaking });
    assert.ok(ConnectionError.is(end.downloadError), 'the failed download is not given as downloadError');
    const record = (await store.list()).find((r) => r.jobId === jobId);
    assert.ok(
      record?.lastStatus !== undefined && !isTerminalStatus(record.lastStatus),
      `the record says ${record?.lastStatus} though its outputs were not downloaded`,
    );
    assert.deepEqual(told, [], 'an end whose outputs were not downloaded was told');
    // The next start-up reads the job again (its record is not terminal), downloads its output and only then writes it.
    lease.release();
    const found = await ends.resume();
    assert.deepEqual(
      found.map((e) => [e.job.id, e.files.length, e.downloadError]),
      [[jobId, 1, undefined]],
    );
    assert.equal((await store.list()).find((r) => r.jobId === jobId)?.lastStatus, 'succeeded');
    assert.equal(told.length, 1);
    service.dispose();
  });

  it('a remembered job the server answers 404 for at start-up becomes lost: its record says lost, nothing downloaded or told', async () => {
    const gone = '0b7e7a4e-0000-4000-8000-00000000dead';
    await store.put({
      idempotencyKey: 'gone-key',
      baseUrl: companion.origin,
      state: 'created',
      jobId: gone,
      submittedAt: new Date().toISOString(),
      lastStatus: 'running',
      client: 'vscode',
    });
    const { service } = serviceOf(companion, store);
    const told: HandledEnd[][] = [];
    let lostLine!: () => void;
    const logged = new Promise<void>((resolve) => (lostLine = resolve));
    const ends = new JobEnds<Conn>({
      jobs: service,
      store,
      log: { info: (_c, m) => m.includes('lost') && lostLine(), warn: () => undefined },
      outputDir: async () => assert.fail('nothing to download for a lost job'),
      tell: (e) => told.push(e),
    });
    assert.deepEqual(await ends.resume(), []);
    await logged;
    assert.equal((await store.get('gone-key'))?.lastStatus, 'lost');
    assert.deepEqual(told, []);
    ends.dispose();
    service.dispose();
  });

  it('a job of the CLI is read again and its record updated, but neither downloaded nor told here (the CLI downloads its own)', async () => {
    const jobId = await submitThenGoAway(companion, store, 'cli');
    companion.run(jobId);
    companion.finish(jobId);
    const { service } = serviceOf(companion, store);
    const { ends, told } = jobEndsOf(service, store, root);
    await ends.resume();
    assert.equal((await store.list()).find((r) => r.jobId === jobId)?.lastStatus, 'succeeded');
    assert.equal(told.length, 0);
    assert.equal(contentGets(companion), 0);
    service.dispose();
  });
});

describe('job ends: rules', () => {
  const record = (over: Partial<JobRecord>): JobRecord => ({
    idempotencyKey: Math.random().toString(36),
    baseUrl: 'http://a',
    state: 'created',
    submittedAt: '2026-11-25T10:00:00Z',
    ...over,
  });

  it("recordsToResume: this server's records with a job id not known to be terminal, newest first", () => {
    const old = record({ jobId: 'old', lastStatus: 'queued', submittedAt: '2026-11-25T09:00:00Z' });
    const running = record({ jobId: 'running', lastStatus: 'running' });
    const unheard = record({ jobId: 'unheard' });
    const records = [
      old,
      running,
      unheard,
      record({ jobId: 'done', lastStatus: 'succeeded' }),
      record({ lastStatus: 'queued' }),
      record({ jobId: 'other', baseUrl: 'http://b' }),
    ];
    assert.deepEqual(
      recordsToResume(records, 'http://a').map((r) => r.jobId),
      ['running', 'unheard', 'old'],
    );
  });

  it('outputBytes: the server\'s size above 0, else the bytes on disk, else unknown (never "0 B" for a size not computed)', () => {
    assert.equal(outputBytes({ sizeBytes: 2048 }, 69), 2048);
    assert.equal(outputBytes({ sizeBytes: 0 }, 69), 69);
    assert.equal(outputBytes({ sizeBytes: 0 }), null);
    assert.equal(outputBytes({ sizeBytes: null }), null);
  });

  it('jobEndsSummary: one notice for several ends, counted per status, error when one failed; one end reads as its own notice', () => {
    const notice = jobEndsSummary(
      [
        { jobId: 'a', status: 'succeeded', files: 2 },
        { jobId: 'b', status: 'failed', files: 0 },
        { jobId: 'c', status: 'succeeded', files: 1 },
      ],
      untranslated,
    );
    assert.deepEqual(notice, {
      severity: 'error',
      message: 'Comfy Cloud: 3 jobs ended while VS Code was away: 2 succeeded, 1 failed — 3 outputs saved.',
      actions: ['showJob'],
    });
    assert.equal(
      jobEndsSummary([{ jobId: 'abcdef1234', status: 'succeeded', files: 1 }], untranslated).message,
      'Comfy Cloud: job abcdef12 succeeded — 1 output saved.',
    );
  });
});

describe('what the companion does not say is shown as unknown', () => {
  let companion: Companion;
  before(async () => {
    companion = await startCompanion();
  });
  after(async () => {
    await companion.close();
  });

  /** The job as the client reads it from the companion at each step: queued, running, succeeded. */
  async function jobsOfEachStep() {
    const backend = new V2JobBackend(new V2Client({ baseUrl: companion.origin }));
    const accepted = await backend.submit(invertWorkflow(), { store: new StateStore(tempDir('cc-companion-')) });
    const id = accepted.job.id;
    const queued = (await backend.get(id)).job;
    companion.run(id);
    const running = (await backend.get(id)).job;
    companion.finish(id);
    const succeeded = (await backend.get(id)).job;
    await backend.close();
    return { queued, running, succeeded };
  }

  const presentJob = (
    job: Parameters<typeof monitorJob>[0]['job'],
    saved?: Parameters<typeof monitorJob>[0]['saved'],
  ) =>
    present(
      initialView(
        monitorState(
          monitorJob({ jobId: job!.id, job, connection: 'companion', saved }, (s) => s, untranslated),
          null,
          monitorStrings(untranslated),
        ),
      ),
    );

  it('the monitor: a finished job without started_at / completed_at shows "Started: unknown", "Finished: unknown"; a queued one "not yet"', async () => {
    const { queued, succeeded } = await jobsOfEachStep();
    assert.equal(succeeded.startedAt, null);
    const times = presentJob(succeeded).header.times.map((t) => `${t.label}: ${t.text}`);
    assert.deepEqual(times.slice(1), ['Started: unknown', 'Finished: unknown']);
    assert.deepEqual(
      presentJob(queued)
        .header.times.slice(1)
        .map((t) => t.text),
      ['not yet', 'not yet'],
    );
  });

  it('the monitor: progress without node counts shows what it has (no "Nodes 0 of 0", no "(?)"); a preview with node_id "" names no node', async () => {
    const { running } = await jobsOfEachStep();
    const p = presentJob(running).progress;
    assert.equal(p.nodes, null);
    assert.equal(p.node, 'Node 3');
    assert.equal(p.percentText, '50%');
    const frame = monitorPreview(
      { nodeId: '', contentType: 'image/png', dataBase64: companion.png.toString('base64') },
      1,
      running.progress,
      (s) => s,
    );
    assert.equal(frame?.nodeId, null);
  });

  it('the monitor: an output of size 0 with its file on disk shows the bytes on disk', async () => {
    const { succeeded } = await jobsOfEachStep();
    assert.equal(succeeded.outputs[0]?.sizeBytes, 0);
    const card = presentJob(
      succeeded,
      new Map([[succeeded.outputs[0]!.id, { thumbnail: 'vscode-resource:/x.png', bytes: companion.png.length }]]),
    ).outputs.cards[0]!;
    assert.equal(card.kind, 'image');
    assert.equal(card.sizeLabel, `${companion.png.length} B`);
    assert.equal(presentJob(succeeded).outputs.cards[0]!.sizeLabel, '', 'a size not computed shows as "0 B"');
  });

  it('the Jobs view: the tooltip says "Started: unknown" / "Completed: unknown" for a finished job; an output of size 0 shows no "0 bytes"', async () => {
    const { succeeded } = await jobsOfEachStep();
    const item = presentEntry({ baseUrl: companion.origin, jobId: succeeded.id, job: succeeded }, { now: Date.now() });
    assert.match(item.tooltip, /- Started: unknown\n/);
    assert.match(item.tooltip, /- Completed: unknown\n/);
    const output = jobChildren(
      { baseUrl: companion.origin, jobId: succeeded.id, job: succeeded },
      { now: Date.now() },
    )[0]!;
    assert.equal(output.description, 'image/png');
  });
});
