/**
 * The Job and Asset API v2 as a job backend (src/core/v2/jobBackend.ts): jobs come back in the client's model, links
 * are followed and not built (design rule 4: a job it saw is read and canceled through its answer's `urls`), and a
 * model job's outputs download from the URLs its answer gave.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import type { ServerResponse } from 'node:http';
import { V2Client } from '../../src/core/v2/client';
import { V2JobBackend } from '../../src/core/v2/jobBackend';
import { invertWorkflow, job } from './builders';
import { useEmulator } from './harness';
import { startServer } from './httpServer';
import { tempDir } from './tmp';

describe('v2 job backend', () => {
  it('rule: a job the backend saw is read and canceled through the links of its answer (here under another mount prefix), never a URL built from the base', async () => {
    const created = job('queued');
    const id = created.id as string;
    const links = {
      self: `/mount/x/jobs/${id}`,
      events: `/mount/x/jobs/${id}/events`,
      cancel: `/mount/x/jobs/${id}/cancel`,
    };
    const server = await startServer((req, res: ServerResponse) => {
      res.setHeader('content-type', 'application/json');
      if (req.method === 'POST' && req.url === '/api/v2/jobs') {
        res.statusCode = 201;
        res.end(JSON.stringify({ ...created, urls: links }));
        return;
      }
      res.end(
        JSON.stringify({ ...created, status: req.url?.endsWith('/cancel') ? 'canceled' : 'queued', urls: links }),
      );
    });
    const backend = new V2JobBackend(new V2Client({ baseUrl: server.origin }));
    try {
      const accepted = await backend.submit(invertWorkflow({ prefix: 'links' }));
      assert.equal(accepted.job.id, id);
      assert.equal(accepted.job.api, 'v2');
      assert.equal((await backend.get(id)).job.status, 'queued');
      assert.equal((await backend.cancel(id)).job.status, 'canceled');
      await backend.cancel('never-seen').catch(() => undefined);
      assert.deepEqual(
        server.seen.map((s) => `${s.method} ${s.url}`),
        [
          'POST /api/v2/jobs',
          `GET /mount/x/jobs/${id}`,
          `POST /mount/x/jobs/${id}/cancel`,
          'POST /api/v2/jobs/never-seen/cancel',
        ],
      );
    } finally {
      await backend.close();
      await server.close();
    }
  });

  describe('against the emulator', () => {
    const emu = useEmulator({ nodeDelayMs: 5 });

    it('rule: a job is watched to its end in the model, and its outputs download (complete files, hash checked) from the URLs its answer gave', async () => {
      const backend = new V2JobBackend(new V2Client({ baseUrl: emu().baseUrl }));
      try {
        const accepted = await backend.submit(invertWorkflow({ prefix: 'backend-dl' }));
        const seen: string[] = [];
        const final = await backend.watch(accepted, { onAnswer: (a) => seen.push(a.job.status) });
        assert.equal(final.job.status, 'succeeded');
        assert.equal(seen.at(-1), 'succeeded', 'the final answer was not told');
        assert.equal(final.job.outputs.length, 1);
        assert.match(
          final.job.outputs[0]!.url ?? '',
          /^http:\/\/127\.0\.0\.1:\d+\//,
          "the output's URL is not absolute",
        );
        const dir = tempDir('cc-v2-backend-');
        const [saved, ...rest] = await backend.downloadOutputs(final.job, dir);
        assert.deepEqual(rest, []);
        assert.equal(saved!.output.id, final.job.outputs[0]!.id);
        assert.equal(fs.statSync(saved!.path).size, saved!.bytes);
        assert.deepEqual(fs.readdirSync(dir), [saved!.path.split('/').pop()], 'a partial file was left');
      } finally {
        await backend.close();
      }
    });
  });
});

describe("v2 job backend: the first word of a watch is the server's now", () => {
  const emu = useEmulator({});

  it('rule: a watch of a job id whose earlier answer the backend remembers reads the job (GET) before it opens the stream, and tells that answer first', async () => {
    const backend = new V2JobBackend(new V2Client({ baseUrl: emu().baseUrl }));
    emu().holdNodes({});
    try {
      const accepted = await backend.submit(invertWorkflow({ prefix: 'v2b-read-first' }));
      const id = accepted.job.id;
      await emu().whenHeld();
      // The backend remembers the job's answer (its links): a queued one, older than the running job.
      const from = emu().requests.length;
      const told: string[] = [];
      const stop = new AbortController();
      let streamed!: () => void;
      // The stream's first word (its mode) comes once it is open.
      const streaming = new Promise<void>((resolve) => (streamed = resolve));
      const watching = backend.watch(id, {
        signal: stop.signal,
        onAnswer: (a) => told.push(`answer ${a.job.status}`),
        onUpdate: (u) => {
          told.push(`update ${u.type}`);
          if (u.type === 'mode') streamed();
        },
      });
      watching.catch(() => undefined);
      await streaming;
      const paths = emu()
        .requests.slice(from)
        .map((r) => `${r.method} ${r.path}`);
      assert.equal(paths[0], `GET /api/v2/jobs/${id}`, `the first request of the watch: ${paths.join(', ')}`);
      assert.equal(told[0], 'answer running', `told first: ${told.join(', ')}`);
      stop.abort();
      await assert.rejects(watching);
    } finally {
      emu().holdNodes(null);
      await backend.close();
    }
  });
});
