/**
 * How the emulator is served: under a mount prefix (serverless deployment), with static tokens (each token an owner),
 * retention (expires_at, injectable clock), X-Svc-Request-Id on every response with 404 envelopes for unknown routes,
 * and its options.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startEmulator } from '../../src/emulator';
import { assertSolid, fetchPng, resolve, sample, submit } from './emulator.fixtures';
import { TERMINAL, UUID, call, until, useEmulator, type Json } from './harness';
import { tempDir } from './tmp';

describe('emulator under a mount prefix (serverless deployment)', () => {
  const emu = useEmulator({ mountPrefix: '/deployment/dep-1/' });

  it('baseUrl carries the prefix; paths outside it are 404 not_found', async () => {
    assert.equal(emu().baseUrl, `${emu().origin}/deployment/dep-1`);
    for (const p of [
      '/api/v2/health',
      '/api/v2/jobs',
      '/deployment/dep-2/api/v2/health',
      '/deployment/dep-10/api/v2/health',
    ]) {
      const res = await call(`${emu().origin}${p}`);
      assert.equal(res.status, 404, p);
      assert.equal(res.body.error.code, 'not_found');
    }
    assert.equal((await call(`${emu().baseUrl}/api/v2/health`)).status, 200);
  });

  it('urls and output urls are host-relative and start with the prefix; following them reaches the job and its PNG', async () => {
    const job = (await submit(emu(), { workflow: sample() })).body;
    for (const link of Object.values(job.urls) as string[])
      assert.ok(link.startsWith('/deployment/dep-1/api/v2/jobs/'), link);
    const self = await call(resolve(emu(), job.urls.self));
    assert.equal(self.body.id, job.id);
    const done = await until(emu(), job.id, (j) => TERMINAL.includes(j.status));
    assert.ok(done.outputs[0].url.startsWith('/deployment/dep-1/api/v2/assets/'), done.outputs[0].url);
    assertSolid(await fetchPng(resolve(emu(), done.outputs[0].url)), 64, 64, [0, 255, 255]);
    const workflow = await call(resolve(emu(), `${job.urls.self}/workflow`));
    assert.equal(workflow.body.format, 'api');
  });
});

describe('emulator with static tokens (self-hosted with auth): each token is an owner', () => {
  const emu = useEmulator({ tokens: ['tok-A', 'tok-B'] });
  const A = { authorization: 'Bearer tok-A' };
  const B = { authorization: 'Bearer tok-B' };

  it('no token, or a wrong one: 401 unauthorized, on every route', async () => {
    const cases: Record<string, string>[] = [{}, { authorization: 'Bearer nope' }, { authorization: 'tok-A' }];
    for (const headers of cases) {
      const res = await submit(emu(), { workflow: sample() }, headers);
      assert.equal(res.status, 401);
      assert.equal(res.body.error.code, 'unauthorized');
      assert.equal(res.headers.get('www-authenticate'), 'Bearer');
    }
    assert.equal((await call(`${emu().baseUrl}/api/v2/jobs`)).status, 401);
    assert.equal((await call(`${emu().baseUrl}/api/v2/health`)).status, 401);
  });

  it("another owner's job and assets answer 404 not_found like unknown ones; listings are per owner", async () => {
    const job = (await submit(emu(), { workflow: sample() }, A)).body;
    assert.ok(job.id);
    const done = await until(emu(), job.id, (j) => TERMINAL.includes(j.status), A);
    const asset = done.outputs[0];
    for (const url of [
      job.urls.self,
      `${job.urls.self}/workflow`,
      job.urls.events,
      asset.url,
      `${emu().baseUrl}/api/v2/assets/${asset.id}`,
    ]) {
      const res = await call(url, { headers: B });
      assert.equal(res.status, 404, url);
      assert.equal(res.body.error.code, 'not_found');
    }
    assert.equal((await call(job.urls.cancel, { method: 'POST', headers: B })).status, 404);
    assert.equal((await fetch(asset.url, { headers: A })).status, 200);
    const listB = await call(`${emu().baseUrl}/api/v2/jobs`, { headers: B });
    assert.ok(!listB.body.jobs.some((j: Json) => j.id === job.id));
    const listA = await call(`${emu().baseUrl}/api/v2/jobs`, { headers: A });
    assert.ok(listA.body.jobs.some((j: Json) => j.id === job.id));
  });

  it('Idempotency-Keys are per owner', async () => {
    const key = crypto.randomUUID();
    assert.equal((await submit(emu(), { workflow: sample() }, { ...A, 'idempotency-key': key })).status, 201);
    assert.equal((await submit(emu(), { workflow: sample() }, { ...B, 'idempotency-key': key })).status, 201);
  });

  it("a core/ASSET reference to another owner's asset is 422 missing_asset", async () => {
    const job = (await submit(emu(), { workflow: sample() }, A)).body;
    const done = await until(emu(), job.id, (j) => TERMINAL.includes(j.status), A);
    const workflow = sample();
    workflow['3'].inputs.reference = { __type: 'core/ASSET', info: { id: done.outputs[0].id } };
    assert.equal((await submit(emu(), { workflow }, B)).body.error.code, 'missing_asset');
    assert.equal((await submit(emu(), { workflow }, A)).status, 201);
  });
});

describe('emulator: retention (expires_at, injectable clock)', () => {
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const emu = useEmulator({ now: () => clock, retentionMs: 60_000 });

  it('expires_at = created_at + retention; after it the job, its workflow and its outputs answer 404 not_found', async () => {
    const job = (await submit(emu(), { workflow: sample() })).body;
    assert.equal(Date.parse(job.expires_at) - Date.parse(job.created_at), 60_000);
    const done = await until(emu(), job.id, (j) => TERMINAL.includes(j.status));
    assert.equal(done.status, 'succeeded');
    clock += 59_999;
    assert.equal((await call(job.urls.self)).status, 200);
    clock += 1;
    for (const url of [job.urls.self, `${job.urls.self}/workflow`, job.urls.events, done.outputs[0].url]) {
      const res = await call(url);
      assert.equal(res.status, 404, url);
      assert.equal(res.body.error.code, 'not_found');
    }
    assert.ok(!(await call(`${emu().baseUrl}/api/v2/jobs`)).body.jobs.some((j: Json) => j.id === job.id));
  });
});

describe('emulator: every response carries X-Svc-Request-Id; unknown routes are 404 envelopes', () => {
  const emu = useEmulator({ tokens: ['t'] });
  const auth = { authorization: 'Bearer t' };

  it('success, 401, 404, 422, unknown path and wrong method: a UUID request id on each, errors in the envelope', async () => {
    const answers = [
      await call(`${emu().baseUrl}/api/v2/health`, { headers: auth }),
      await call(`${emu().baseUrl}/api/v2/health`),
      await call(`${emu().baseUrl}/api/v2/jobs/x`, { headers: auth }),
      await submit(emu(), { workflow: {} }, auth),
      await call(`${emu().baseUrl}/api/v2/nothing-here`, { headers: auth }),
      await call(`${emu().baseUrl}/api/v2/jobs/x/cancel`, { headers: auth }),
      await call(`${emu().baseUrl}/api/v2/health`, { method: 'DELETE', headers: auth }),
    ];
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 401, 404, 422, 404, 404, 404],
    );
    const ids = answers.map((a) => a.headers.get('x-svc-request-id'));
    for (const id of ids) assert.match(id ?? '', UUID);
    assert.equal(new Set(ids).size, ids.length, 'one id per request');
    for (const a of answers.slice(1)) {
      assert.equal(typeof a.body.error.code, 'string');
      assert.equal(typeof a.body.error.message, 'string');
    }
  });

  it('records every request in order, with its headers', async () => {
    const before = emu().requests.length;
    await call(`${emu().baseUrl}/api/v2/health?probe=1`, { headers: { ...auth, 'x-probe': 'yes' } });
    const seen = emu().requests.slice(before);
    assert.equal(seen.length, 1);
    assert.equal(seen[0].method, 'GET');
    assert.equal(seen[0].path, '/api/v2/health?probe=1');
    assert.equal(seen[0].headers['x-probe'], 'yes');
    assert.equal(seen[0].headers.authorization, 'Bearer t');
  });
});

describe('emulator options', () => {
  it('writes outputs to a given dataDir and keeps it on close; logs one line per request without credentials', async () => {
    const dataDir = tempDir('cc-emu-data-');
    const lines: string[] = [];
    const emu = await startEmulator({ port: 0, dataDir, tokens: ['secret-token'], log: (l) => lines.push(l) });
    try {
      const headers = { authorization: 'Bearer secret-token' };
      const job = (await submit(emu, { workflow: sample() }, headers)).body;
      const done = await until(emu, job.id, (j) => TERMINAL.includes(j.status), headers);
      assert.ok(
        fs.existsSync(path.join(dataDir, 'blobs', done.outputs[0].hash.slice('blake3:'.length))),
        'blobs are named by their hash',
      );
    } finally {
      await emu.close();
    }
    assert.ok(fs.existsSync(dataDir), 'a given dataDir is kept');
    assert.ok(
      lines.some((l) => /POST \/api\/v2\/jobs → 201/.test(l)),
      lines.join('\n'),
    );
    assert.ok(!lines.some((l) => l.includes('secret-token')));
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses invalid options with a TypeError', async () => {
    await assert.rejects(startEmulator({ port: 0, concurrency: 0 }), TypeError);
    await assert.rejects(startEmulator({ port: 0, mountPrefix: 'deployment/x' }), TypeError);
  });

  it('concurrency 2 runs two jobs at once', async () => {
    const emu = await startEmulator({ port: 0, nodeDelayMs: 60_000, concurrency: 2 });
    try {
      const a = (await submit(emu, { workflow: sample() })).body;
      const b = (await submit(emu, { workflow: sample() })).body;
      await until(emu, a.id, (j) => j.status === 'running');
      await until(emu, b.id, (j) => j.status === 'running');
    } finally {
      await emu.close();
    }
  });
});
