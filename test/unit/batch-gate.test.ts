/**
 * The gate of a batch (src/core/batch/gate.ts): a concurrency limit, and one shared pause for the whole batch when
 * the server is busy (Job and Asset API v2, Errors: 429 `queue_full` and `rate_limited` with Retry-After).
 */
import * as assert from 'node:assert/strict';
import { BatchGate } from '../../src/core/batch/gate';
import { ManualClock } from '../../src/core/http/clock';
import { AbortError } from '../../src/core/http/errors';

/** A promise with its resolve. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Lets every pending promise callback run. */
const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('batch gate: jobs in flight are capped by the concurrency', () => {
  it('never more than N tasks run at once; the others start in order as slots free', async () => {
    const gate = new BatchGate(2, new ManualClock(0));
    const ends = Array.from({ length: 5 }, deferred);
    const started: number[] = [];
    let peak = 0;
    const all = ends.map((d, i) =>
      gate.run(async () => {
        started.push(i);
        peak = Math.max(peak, gate.inFlight);
        await d.promise;
      }),
    );
    await settle();
    assert.deepEqual(started, [0, 1]);
    ends[1].resolve();
    await settle();
    assert.deepEqual(started, [0, 1, 2]);
    for (const d of ends) d.resolve();
    await Promise.all(all);
    assert.deepEqual(started, [0, 1, 2, 3, 4]);
    assert.equal(peak, 2);
    assert.equal(gate.inFlight, 0);
  });

  it('a concurrency that is not a whole number of at least 1 is refused', () => {
    assert.throws(() => new BatchGate(0, new ManualClock(0)), RangeError);
    assert.throws(() => new BatchGate(1.5, new ManualClock(0)), RangeError);
  });
});

describe('batch gate: queue_full and rate_limited slow the whole batch, honouring Retry-After', () => {
  it('a pause holds every task not yet started until its deadline; pauses asked at once do not add up', async () => {
    const clock = new ManualClock(0);
    const gate = new BatchGate(4, clock);
    // Three jobs hear queue_full with Retry-After 5 s at the same moment.
    gate.pause(5000);
    gate.pause(5000);
    gate.pause(5000);
    const started: number[] = [];
    const all = [0, 1, 2].map(() => gate.run(async () => void started.push(clock.now())));
    await settle();
    assert.deepEqual(started, [], 'nothing starts during the pause');
    clock.advance(4999);
    await settle();
    assert.deepEqual(started, []);
    clock.advance(1);
    await Promise.all(all);
    assert.deepEqual(started, [5000, 5000, 5000], 'all start once, at the one deadline');
  });

  it('a longer pause asked during a wait is waited out too; open() is what a retry waits on', async () => {
    const clock = new ManualClock(0);
    const gate = new BatchGate(1, clock);
    gate.pause(1000);
    let opened = -1;
    const p = gate.open().then(() => (opened = clock.now()));
    await settle();
    clock.advance(500);
    gate.pause(2000); // until 2500
    await settle();
    clock.advance(500);
    await settle();
    assert.equal(opened, -1);
    clock.advance(1500);
    await p;
    assert.equal(opened, 2500);
  });

  it("an abort while waiting for a slot rejects with an AbortError (whatever the signal's reason) and gives the slot to no one", async () => {
    const gate = new BatchGate(1, new ManualClock(0));
    const first = deferred();
    const running = gate.run(() => first.promise);
    const ac = new AbortController();
    const waiting = gate.run(async () => assert.fail('must not run'), ac.signal);
    ac.abort(new Error('stop'));
    await assert.rejects(waiting, (err) => AbortError.is(err));
    // Already aborted before asking: the same.
    await assert.rejects(
      gate.run(async () => assert.fail('must not run'), ac.signal),
      (err) => AbortError.is(err),
    );
    first.resolve();
    await running;
    assert.equal(gate.inFlight, 0);
  });
});
