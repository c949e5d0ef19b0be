/**
 * The Jobs view, two numbers:
 * - building the tree's items from 10,000 remembered jobs: merging them with the listing and presenting what the
 *   view shows (every running job and the first page of Recent), and every one of the 10,000 as a worst case. Goal:
 *   at most 100 ms here. Reference, side by side: `JSON.parse` of the same records as one document. Reading the
 *   10,000 record files of the state store is reported apart (`storeListMs`): it is the store's cost, not the tree's.
 * - requests made while 1,000 terminal jobs are shown: the view's own logic (merge, which jobs to follow) over a real
 *   job service and state store against the emulator, then a quiet period; goal zero (terminal jobs are never asked
 *   about again). Reference: the same with 10 running jobs, whose watches do send requests.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import { V2Client } from '../src/core/v2/client';
import { V2JobBackend } from '../src/core/v2/jobBackend';
import { JobService, type JobFollow } from '../src/core';
import { StateStore, type JobRecord } from '../src/core/state';
import { buildJobTree, mergeEntries, needsFollow } from '../src/core/views';
import { neutralize, untranslated } from '../src/core/util';
import { startEmulator } from '../src/emulator';
import { row, scaled, timed } from './util';

const STATUSES = ['succeeded', 'succeeded', 'succeeded', 'failed', 'canceled', 'running', 'queued'];
/** The view's first page of Recent (jobsView.ts RECENT_PAGE_SIZE). */
const RECENT_PAGE = 50;

function records(count: number, baseUrl: string, statuses: readonly string[]): JobRecord[] {
  const now = Date.now();
  return Array.from({ length: count }, (_, i) => ({
    idempotencyKey: randomUUID(),
    baseUrl,
    state: 'created' as const,
    jobId: randomUUID(),
    workflowFile: `/work/flows/flow-${i % 37}.json`,
    submittedAt: new Date(now - i * 1000).toISOString(),
    expiresAt: new Date(now + 86_400_000).toISOString(),
    lastStatus: statuses[i % statuses.length],
    client: i % 2 ? 'cli' : 'vscode',
  }));
}

async function store(dir: string, list: JobRecord[]): Promise<StateStore> {
  const s = new StateStore(dir);
  for (const r of list) await s.put(r);
  return s;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function buildBench(dir: string): Promise<void> {
  const baseUrl = 'http://127.0.0.1:8189';
  const list = records(scaled(10_000, 100), baseUrl, STATUSES);
  const s = await store(path.join(dir, 'tree'), list);
  const json = JSON.stringify(list);
  const options = { clean: (t: string) => neutralize(t), now: Date.now(), t: untranslated };
  const read: number[] = [];
  const view: number[] = [];
  const all: number[] = [];
  const reference: number[] = [];
  let shown = 0;
  for (let round = 0; round < 5; round++) {
    const listed = await timed(() => s.list());
    read.push(listed.ms);
    view.push(
      (
        await timed(async () => {
          const tree = buildJobTree(mergeEntries(baseUrl, listed.value, []), { ...options, recentLimit: RECENT_PAGE });
          shown = tree.running.length + tree.recent.length;
        })
      ).ms,
    );
    all.push((await timed(async () => void buildJobTree(mergeEntries(baseUrl, list, []), options))).ms);
    reference.push((await timed(async () => void JSON.parse(json))).ms);
  }
  const ref = median(reference);
  row(`jobs tree: ${list.length} remembered`, {
    buildViewMs: median(view),
    shownItems: shown,
    buildAllMs: median(all),
    goalMs: 100,
    referenceJsonParseMs: ref,
    buildAllRatio: median(all) / ref,
    storeListMs: median(read),
  });
}

async function requestsBench(dir: string): Promise<void> {
  const emu = await startEmulator({ port: 0, nodeDelayMs: 200 });
  try {
    const quietMs = scaled(3000, 100);
    const count = async (name: string, list: JobRecord[]): Promise<number> => {
      const s = await store(path.join(dir, name), list);
      const service = new JobService({
        clients: {
          identity: async () => emu.baseUrl,
          create: async () => ({ backend: new V2JobBackend(new V2Client({ baseUrl: emu.baseUrl })) }),
        },
        store: s,
        log: { info: () => undefined, warn: () => undefined },
      });
      // What the view does when shown: merge the store with the listing, follow every job that needs it.
      const entries = mergeEntries(emu.baseUrl, await s.list(), []);
      await service.start();
      const before = emu.requests.length;
      const follows: JobFollow[] = entries.filter(needsFollow).map((e) => service.follow(e.jobId!));
      await new Promise((resolve) => setTimeout(resolve, quietMs)); // a benchmark's measuring window, not a test
      const made = emu.requests.length - before;
      for (const f of follows) f.dispose();
      service.dispose();
      return made;
    };
    // Terminal jobs the emulator does not know: a request about them would show as a 404 in its log.
    const terminalJobs = scaled(1000, 20);
    const terminal = await count('terminal', records(terminalJobs, emu.baseUrl, ['succeeded', 'failed', 'canceled']));
    // Reference: 10 running jobs, each really running on the emulator, so their watches talk to it.
    const client = new V2Client({ baseUrl: emu.baseUrl });
    const workflow = JSON.parse(
      fs.readFileSync(path.join(__dirname, '..', '..', 'media', 'samples', 'invert.json'), 'utf8'),
    );
    const running: JobRecord[] = [];
    for (let i = 0; i < 10; i++) {
      const { job } = await client.jobs.submit(workflow, { idempotencyKey: randomUUID() });
      running.push({ ...records(1, emu.baseUrl, ['running'])[0]!, jobId: job.id });
    }
    await client.close();
    const live = await count('running', running);
    row('jobs view: requests while shown', {
      terminalJobs,
      requests: terminal,
      goal: 0,
      quietMs,
      referenceRunningJobs: 10,
      referenceRequests: live,
    });
  } finally {
    await emu.close();
  }
}

/** Runs both; files in a temporary folder under `dir`. */
export async function benchTree(dir: string): Promise<void> {
  fs.mkdirSync(dir, { recursive: true });
  const work = fs.mkdtempSync(path.join(dir || os.tmpdir(), 'tree-'));
  try {
    await buildBench(work);
    await requestsBench(work);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
