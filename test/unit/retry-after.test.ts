/**
 * The longest pause wins (Job and Asset API v2, Errors: any 429 with Retry-After means back off and retry): wherever
 * several requests share a server's pause (http/retry.ts RetryPause: a batch's gate, a watch's polls and its event
 * stream), a later, shorter pause never shortens an earlier, longer one. Every test asks UNEQUAL pauses, so a rule
 * "the latest pause wins" fails them. Injected clocks, no sleeps.
 */
import * as assert from 'node:assert/strict';
import { JobSchema } from '../../src/core/v2/schemas';
import { ManualClock } from '../../src/core';
import { RetryPause } from '../../src/core/http';
import { errorFromResponse } from '../../src/core/v2/errors';
import { watchJob } from '../../src/core/v2/watch';
import type { JobSnapshot, JobsApi } from '../../src/core/v2/jobs';
import { BatchGate } from '../../src/core/batch/gate';
import type { JobEvent } from '../../src/core/v2/events';
import { errorEnvelope, headers, job } from './builders';

/** Lets every pending promise callback run. */
const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('Retry-After: the longest pause asked for wins (RetryPause)', () => {
  it('a later, shorter pause does not shorten an earlier, longer one; a later, longer one extends it', async () => {
    const clock = new ManualClock(0);
    const pause = new RetryPause(clock);
    pause.extend(5000);
    clock.advance(1000);
    pause.extend(1000); // ends at 2000: shorter than the 5000 standing
    assert.equal(pause.remainingMs(), 4000);
    let opened = -1;
    const waiting = pause.wait().then(() => (opened = clock.now()));
    clock.advance(1500); // 2500: past the shorter deadline
    await settle();
    assert.equal(opened, -1, 'the shorter, later pause did not open it');
    pause.extend(6000); // until 8500: longer, asked during the wait
    clock.advance(2500); // 5000
    await settle();
    assert.equal(opened, -1, 'a longer pause asked during the wait is waited out too');
    clock.advance(3500);
    await waiting;
    assert.equal(opened, 8500);
  });

  it('batch gate: a 429 with Retry-After 5 s then one with 2 s hold every task until 5 s, not 2 s', async () => {
    const clock = new ManualClock(0);
    const gate = new BatchGate(2, clock);
    gate.pause(5000);
    clock.advance(500);
    gate.pause(2000); // until 2500
    const started: number[] = [];
    const all = [0, 1].map(() => gate.run(async () => void started.push(clock.now())));
    clock.advance(2500); // 3000
    await settle();
    assert.deepEqual(started, [], 'nothing starts at the later, shorter deadline');
    clock.advance(2000); // 5000
    await Promise.all(all);
    assert.deepEqual(started, [5000, 5000]);
  });
});

/** Lets every pending promise callback run (the doubles below answer without I/O). */
async function flush(): Promise<void> {
  for (let i = 0; i < 20; i++) await settle();
}

/** A 429 `rate_limited` as the client reads it, with its Retry-After (s). */
function rateLimited(retryAfterS: number): unknown {
  return errorFromResponse(429, errorEnvelope('rate_limited'), headers({ 'retry-after': String(retryAfterS) }));
}

/**
 * A scripted JobsApi for watchJob: each GET and each opening of the event stream is logged with the clock's time and
 * answered by the script (a job status, or an error thrown); a stream yields its events, then waits for `end`.
 */
class ScriptedJobs {
  readonly log: { at: number; what: 'get' | 'events' }[] = [];
  constructor(
    private readonly clock: ManualClock,
    private readonly answers: {
      get: (n: number) => string | unknown;
      events: (n: number) => { frames: JobEvent[]; end: Promise<void> } | unknown;
    },
  ) {}
  private gets = 0;
  private streams = 0;
  readonly base = job('running');

  async get(): Promise<JobSnapshot> {
    this.log.push({ at: this.clock.now(), what: 'get' });
    const answer = this.answers.get(++this.gets);
    if (typeof answer !== 'string') throw answer;
    return {
      job: JobSchema.parse({ ...this.base, status: answer }),
      source: new URL(`http://x/api/v2/jobs/${this.base.id as string}`),
      requestId: undefined,
    };
  }

  async events(): Promise<{ requestId: undefined; events: AsyncGenerator<JobEvent> }> {
    this.log.push({ at: this.clock.now(), what: 'events' });
    const answer = this.answers.events(++this.streams);
    if (!(answer && typeof answer === 'object' && 'frames' in answer)) throw answer;
    const { frames, end } = answer as { frames: JobEvent[]; end: Promise<void> };
    return {
      requestId: undefined,
      events: (async function* () {
        yield* frames;
        await end;
      })(),
    };
  }
}

/** A promise with its resolve. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('Retry-After in a watch: one pause for its polls and its event stream', () => {
  const running: JobEvent = { type: 'status', status: 'running', queuePosition: null };

  it("a rate limit heard by the event stream (Retry-After 10 s) holds the polls: the stream's failure wakes no GET before it", async () => {
    const clock = new ManualClock(0);
    // The stream is refused by the account's rate limit, first for 10 s, then for a SHORTER 1 s.
    const jobs = new ScriptedJobs(clock, {
      get: (n) => (n >= 3 ? 'succeeded' : 'running'),
      events: (n) => rateLimited(n === 1 ? 10 : 1),
    });
    const watching = watchJob(jobs as unknown as JobsApi, jobs.base.id as string, { clock, maxReconnects: 3 });
    await flush();
    assert.deepEqual(
      jobs.log.map((l) => `${l.what}@${l.at}`),
      ['get@0', 'events@0'],
      'read, then the stream refused',
    );
    for (let t = 0; t < 9900; t += 100) {
      clock.advance(100);
      await flush();
    }
    assert.deepEqual(
      jobs.log.filter((l) => l.at > 0),
      [],
      "no request inside the 10 s pause (not a poll woken by the stream's failure, nor a reopening after 1 s)",
    );
    for (let t = 0; t < 60_000 && !jobs.log.some((l) => l.what === 'get' && l.at > 0); t += 100) {
      clock.advance(100);
      await flush();
    }
    assert.ok(jobs.log.find((l) => l.at > 0)!.at >= 10_000);
    clock.autoAdvance = true;
    clock.advance(600_000);
    assert.equal((await watching).job.status, 'succeeded');
  });

  it("a rate limit heard by a poll (Retry-After 8 s) holds the stream's reopening: a reconnect's short backoff does not cut it", async () => {
    const clock = new ManualClock(0);
    const first = deferred();
    // The first stream stays open until the test ends it; later ones end at once.
    const jobs = new ScriptedJobs(clock, {
      get: (n) => (n === 2 ? rateLimited(8) : n >= 3 ? 'succeeded' : 'running'),
      events: (n) => ({ frames: [running], end: n === 1 ? first.promise : Promise.resolve() }),
    });
    let heardAt: number | undefined;
    const watching = watchJob(jobs as unknown as JobsApi, jobs.base.id as string, {
      clock,
      pollMaxMs: 1000,
      onUpdate: (u) => {
        if (u.type === 'retrying') heardAt ??= clock.now();
      },
    });
    // The stream is open; the second poll is rate limited for 8 s; then the stream ends.
    await flush();
    for (let t = 0; heardAt === undefined && t < 5000; t += 100) {
      clock.advance(100);
      await flush();
    }
    assert.ok(heardAt !== undefined && jobs.log.some((l) => l.what === 'events'), JSON.stringify(jobs.log));
    first.resolve();
    await flush();
    for (let t = 0; t < 7900; t += 100) {
      clock.advance(100);
      await flush();
    }
    const inside = jobs.log.filter((l) => l.at > heardAt! && l.at < heardAt! + 8000);
    assert.deepEqual(
      inside,
      [],
      'no request inside the 8 s pause (the stream is not reopened after its short backoff)',
    );
    for (let t = 0; t < 30_000 && !jobs.log.some((l) => l.what === 'events' && l.at > heardAt!); t += 100) {
      clock.advance(100);
      await flush();
    }
    assert.ok(
      jobs.log.some((l) => l.what === 'events' && l.at >= heardAt! + 8000),
      'the stream is reopened once the pause is over',
    );
    clock.autoAdvance = true;
    clock.advance(600_000);
    assert.equal((await watching).job.status, 'succeeded');
  });
});
