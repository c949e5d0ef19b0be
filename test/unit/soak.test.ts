/**
 * Soak: 200 jobs through a mixed fault plan on the emulator (never lose or duplicate a job). Asserts zero
 * duplicate jobs, zero lost jobs (each submission is a known job or an explicit outcome_unknown record), every
 * terminal state equal to the server's, every Retry-After obeyed, no credential in any log line.
 * Time is injected (waits return at once), so the run takes seconds; the emulator is real HTTP on loopback.
 */
import * as assert from 'node:assert/strict';
import { V2Client } from '../../src/core/v2/client';
import { ManualClock, OutcomeUnknownError, isTerminalStatus } from '../../src/core';
import { StateStore } from '../../src/core/state';
import { submitDurably } from '../../src/core/v2/submission';
import type { RequestLogEntry } from '../../src/core/http';
import { startEmulator, type Emulator } from '../../src/emulator';
import { invertWorkflow } from './builders';
import { tempDir } from './tmp';

const TOKEN = 'soak-secret-token-1234';
const JOBS = 200;
const PARALLEL = 8;

describe('soak: 200 jobs under a mixed fault plan', function () {
  this.timeout(240_000);
  let emu: Emulator;
  const emulatorLog: string[] = [];
  before(async () => {
    emu = await startEmulator({
      port: 0,
      tokens: [TOKEN],
      concurrency: 4,
      log: (l) => emulatorLog.push(l),
      faults: {
        seed: 7,
        rules: [
          { on: 'submit', kind: 'afterCreate', status: 502, every: 9 },
          { on: 'submit', kind: 'afterCreate', reset: true, every: 13 },
          { on: 'submit', kind: 'status', code: 'queue_full', retryAfter: 2, every: 5 },
          { on: 'submit', kind: 'status', code: 'deployment_not_ready', retryAfter: 3, every: 17 },
          { on: 'get', kind: 'status', status: 500, share: 0.08 },
          { on: 'get', kind: 'status', status: 502, every: 23 },
          { on: 'get', kind: 'status', code: 'rate_limited', retryAfter: 1, every: 11 },
          { on: 'get', kind: 'reset', every: 29 },
          { on: 'events', kind: 'dropStream', afterFrames: 2, every: 3 },
          { on: 'events', kind: 'dropStream', afterFrames: 1, how: 'reset', every: 7 },
          { on: 'events', kind: 'status', code: 'too_many_streams', retryAfter: 1, every: 5 },
          { on: 'events', kind: 'status', status: 501, every: 8 },
        ],
      },
    });
  });
  after(async () => emu.close());

  it('no duplicate, no lost job, terminal states as the server says, Retry-After obeyed, no credential logged', async () => {
    const store = new StateStore(tempDir('cc-soak-'));
    const clientLog: RequestLogEntry[] = [];
    // One client per job, each with its own injected clock, as separate processes would have: a shared
    // auto-advancing clock would let one job's waits eat another's retry budget.
    const sleeps: number[] = [];
    /** Every wait the client took after a 429, and what the answer asked for. */
    const waits: { asked: number; waited: number }[] = [];
    const outcomes: { prefix: string; jobId?: string; unknownKey?: string; final?: string }[] = [];

    const one = async (i: number): Promise<void> => {
      const prefix = `soak-${i}`;
      const clock = new ManualClock(Date.now(), { autoAdvance: true });
      const client = new V2Client({
        baseUrl: emu.baseUrl,
        apiKey: TOKEN,
        clock,
        log: (e) => clientLog.push(e),
        timeoutMs: 5_000,
      });
      try {
        const sub = await submitDurably(client, invertWorkflow({ prefix }), {
          store,
          onWait: (w) => {
            const asked = /Retry-After (\d+) s/.exec(w.reason);
            if (asked) waits.push({ asked: Number(asked[1]) * 1000, waited: w.delayMs });
          },
        });
        const final = await client.watch(sub.snapshot);
        outcomes.push({ prefix, jobId: final.job.id, final: final.job.status });
      } catch (err) {
        if (OutcomeUnknownError.is(err)) outcomes.push({ prefix, unknownKey: err.record.idempotencyKey });
        else throw new Error(`job ${i}: ${err instanceof Error ? err.stack : String(err)}`);
      } finally {
        sleeps.push(...clock.sleeps);
        await client.close();
      }
    };
    for (let next = 0; next < JOBS;) {
      const batch = [];
      for (let k = 0; k < PARALLEL && next < JOBS; k++) batch.push(one(next++));
      await Promise.all(batch);
    }

    // What the server has, read without faults in the way.
    emu.setFaults({ rules: [] });
    const reader = new V2Client({ baseUrl: emu.baseUrl, apiKey: TOKEN });
    const { jobs } = await reader.jobs.list({ limit: 1000 });
    const byPrefix = new Map<string, string[]>();
    for (const job of jobs) {
      const wf = await reader.jobs.workflow(job.id);
      const prefix = String((wf.workflow['3'] as { inputs: { filename_prefix: string } }).inputs.filename_prefix);
      byPrefix.set(prefix, [...(byPrefix.get(prefix) ?? []), job.id]);
    }

    // Zero duplicates: no submission ran twice.
    for (const [prefix, ids] of byPrefix) assert.equal(ids.length, 1, `${prefix} ran ${ids.length} times`);
    // Zero lost: every submission is a known job or an explicit outcome_unknown record (whose job the server has).
    assert.equal(outcomes.length, JOBS);
    for (const o of outcomes) {
      if (o.jobId)
        assert.deepEqual(byPrefix.get(o.prefix), [o.jobId], `${o.prefix}: the client's job is not the server's`);
      else assert.equal((await store.get(o.unknownKey!))?.state, 'outcome_unknown', `${o.prefix}: lost`);
    }
    // Terminal states equal the server's.
    for (const o of outcomes.filter((x) => x.jobId)) {
      assert.ok(isTerminalStatus(o.final!), `${o.prefix} ended the watch ${o.final}`);
      assert.equal((await reader.getJob(o.jobId!)).job.status, o.final, `${o.prefix}: state differs from the server's`);
    }
    await reader.close();
    // Faults really fired, of every family.
    const fired = new Set(emu.faultLog.map((f) => `${f.on}:${f.kind}`));
    for (const family of [
      'submit:afterCreate',
      'submit:status',
      'get:status',
      'get:reset',
      'events:dropStream',
      'events:status',
    ]) {
      assert.ok(fired.has(family), `no ${family} fault fired: ${[...fired].join(', ')}`);
    }
    // Every Retry-After obeyed exactly.
    assert.ok(waits.length > 10, `few waits: ${waits.length}`);
    for (const w of waits) assert.equal(w.waited, w.asked);
    // Polls that met a rate_limited waited the Retry-After (the clock saw 1 s sleeps).
    assert.ok(sleeps.includes(1000));
    // No credential in any log line, the client's or the emulator's.
    for (const line of [...clientLog.map((e) => JSON.stringify(e)), ...emulatorLog])
      assert.ok(!line.includes(TOKEN), `credential in a log line: ${line}`);
  });
});
