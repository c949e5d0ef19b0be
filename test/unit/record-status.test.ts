/**
 * One writer of a remembered job's status: `StateStore.recordStatus`, which every place that learns what a server
 * said of a job (a watch's end, the job-end owner, the lost rule, the CLI's follow and `jobs`, the editor's
 * remembered jobs, `V2Client.run`) goes through. It writes the status, keeps a terminal one, and keeps the expiry an
 * answer does not give. A source check keeps it the only writer: no other store update of the core, the CLI or the
 * extension patches `lastStatus` (a record is made with its first status by a submission or a claim).
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { StateStore, type JobRecord } from '../../src/core/state';
import { tempDir } from './tmp';

const root = path.resolve(__dirname, '../../..');

function record(key: string, jobId: string, extra: Partial<JobRecord> = {}): JobRecord {
  return {
    idempotencyKey: key,
    baseUrl: 'http://127.0.0.1:1',
    state: 'created',
    jobId,
    submittedAt: '2026-11-27T10:00:00Z',
    lastStatus: 'running',
    expiresAt: '2026-11-28T10:00:00Z',
    ...extra,
  };
}

describe('a remembered job status has one writer (StateStore.recordStatus)', () => {
  it('writes the status by key, keeping the expiry an answer does not give and taking one it gives', async () => {
    const store = new StateStore(tempDir('cc-record-status-'));
    await store.put(record('k1', 'j1'));
    const [first] = await store.recordStatus('k1', { status: 'succeeded', expiresAt: null });
    assert.equal(first?.lastStatus, 'succeeded');
    assert.equal(first?.expiresAt, '2026-11-28T10:00:00Z', 'no expiry in the answer keeps the one known');
    await store.put(record('k2', 'j2'));
    const [second] = await store.recordStatus('k2', { status: 'running', expiresAt: '2026-11-29T10:00:00Z' });
    assert.equal(second?.expiresAt, '2026-11-29T10:00:00Z');
    assert.deepEqual(await store.recordStatus('missing', { status: 'failed' }), []);
  });

  it('writes every record of a job, and never moves a terminal status back', async () => {
    const store = new StateStore(tempDir('cc-record-status-'));
    await store.put(record('a', 'job'));
    await store.put(record('b', 'job', { lastStatus: 'succeeded' }));
    const written = await store.recordStatus({ baseUrl: 'http://127.0.0.1:1', jobId: 'job' }, { status: 'lost' });
    assert.deepEqual(written.map((r) => [r.idempotencyKey, r.lastStatus]).sort(), [
      ['a', 'lost'],
      ['b', 'succeeded'],
    ]);
  });

  it('no other store update in src/ patches lastStatus', () => {
    const files = execFileSync('git', ['ls-files', '-z', 'src'], { cwd: root, encoding: 'utf8' })
      .split('\0')
      .filter((f) => f.endsWith('.ts') && !f.startsWith('src/emulator/') && f !== 'src/core/state/stateStore.ts');
    const writers: string[] = [];
    for (const file of files) {
      const text = readFileSync(path.join(root, file), 'utf8');
      for (const call of text.matchAll(/\.(update|updateJob)\(/g)) {
        // The call's arguments: up to the parenthesis that closes it.
        let depth = 0;
        let end = call.index + call[0].length - 1;
        for (; end < text.length; end++) {
          if (text[end] === '(') depth++;
          else if (text[end] === ')' && --depth === 0) break;
        }
        if (/\blastStatus\b/.test(text.slice(call.index, end)))
          writers.push(`${file}:${text.slice(0, call.index).split('\n').length}`);
      }
    }
    assert.deepEqual(writers, [], 'write a job status through StateStore.recordStatus');
  });
});
