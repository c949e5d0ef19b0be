/**
 * Which file in an output folder is which job's output (core jobs/savedOutputs.ts): proven by the proof written the
 * moment its download completed (job id + output id, the file's inode and size), never guessed from a name and a size;
 * a hash given by the server verifies a file saved without a proof. And a job's folder is made only when there is
 * something to write into it (jobs/jobEnds.ts step 2). Against a loopback server whose two jobs each have one output
 * named `ComfyUI_00001_.png`, `hash: null`, of the same size and different bytes.
 */
import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import type * as http from 'node:http';
import * as path from 'node:path';
import {
  JobEnds,
  downloadMissingOutputs,
  outputProofPath,
  savedOutputPath,
  type HandledEnd,
  type Job,
  type JobService,
} from '../../src/core';
import { StateStore } from '../../src/core/state';
import { V2Client } from '../../src/core/v2/client';
import { V2JobBackend } from '../../src/core/v2/jobBackend';
import { hashBytes } from '../../src/core/util';
import { job } from './builders';
import { startServer, type TestServer } from './httpServer';
import { tempDir } from './tmp';

const SIZE = 4096;

describe("saved outputs: a file is a job's output by its proof, not by its name and size", () => {
  const wire = new Map<string, Record<string, unknown>>();
  const bytes = new Map<string, Buffer>();
  let server: TestServer;
  let backend: V2JobBackend;

  /** A succeeded job on the server with one output `name` (`hash` as given: null by default), its own random bytes. */
  function serverJob(overrides: { name?: string; hash?: string | null; content?: Buffer } = {}): string {
    const created = job('succeeded');
    const id = String(created.id);
    const content = overrides.content ?? randomBytes(SIZE);
    bytes.set(id, content);
    created.outputs = [
      {
        id: `out-${id}`,
        node_id: '9',
        name: overrides.name ?? 'ComfyUI_00001_.png',
        type: 'image',
        content_type: 'image/png',
        size_bytes: content.length,
        hash: overrides.hash ?? null,
        url: `/content/${id}`,
        url_expires_at: null,
      },
    ];
    wire.set(id, created);
    return id;
  }
  const contentGets = (): number => server.seen.filter((s) => s.url.startsWith('/content/')).length;
  const modelJob = async (id: string): Promise<Job> => (await backend.get(id)).job;

  before(async () => {
    server = await startServer((req: http.IncomingMessage, res: http.ServerResponse) => {
      const url = new URL(req.url ?? '/', server.origin);
      const id = /^\/api\/v2\/jobs\/([^/]+)$/.exec(url.pathname)?.[1] ?? /^\/content\/([^/]+)$/.exec(url.pathname)?.[1];
      if (id !== undefined && url.pathname.startsWith('/api/') && wire.has(id)) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(wire.get(id)));
      } else if (id !== undefined && bytes.has(id)) {
        res
          .writeHead(200, { 'content-type': 'image/png', 'content-length': String(bytes.get(id)!.length) })
          .end(bytes.get(id));
      } else {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { code: 'not_found', message: 'not found' } }));
      }
    });
    backend = new V2JobBackend(new V2Client({ baseUrl: server.origin }));
  });
  after(async () => {
    await backend.close();
    await server.close();
  });

  it("another job's output of the same name and size (hash: null) in the folder is not this job's: this one is downloaded under the next free name", async () => {
    const dir = tempDir('cc-saved-');
    const [a, b] = [serverJob(), serverJob()];
    const [savedA] = await downloadMissingOutputs(backend, await modelJob(a), dir);
    const [savedB] = await downloadMissingOutputs(backend, await modelJob(b), dir);
    assert.equal(path.basename(savedA!.path), 'ComfyUI_00001_.png');
    assert.equal(path.basename(savedB!.path), 'ComfyUI_00001_-1.png', `job ${b} was given job ${a}'s file`);
    assert.ok(fs.readFileSync(savedA!.path).equals(bytes.get(a)!));
    assert.ok(fs.readFileSync(savedB!.path).equals(bytes.get(b)!));
  });

  it('an output saved under a numbered name is found again by its proof: no second download, its own bytes', async () => {
    const dir = tempDir('cc-saved-');
    const [a, b] = [serverJob(), serverJob()];
    await downloadMissingOutputs(backend, await modelJob(a), dir);
    const [first] = await downloadMissingOutputs(backend, await modelJob(b), dir);
    const gets = contentGets();
    for (const id of [a, b]) {
      const [again] = await downloadMissingOutputs(backend, await modelJob(id), dir);
      assert.ok(
        fs.readFileSync(again!.path).equals(bytes.get(id)!),
        `job ${id} was given another job's file: ${again!.path}`,
      );
    }
    assert.equal(contentGets(), gets, 'an output already saved was downloaded again');
    assert.equal((await savedOutputPath((await modelJob(b)).outputs[0]!, dir, b))?.path, first!.path);
    assert.deepEqual(
      fs
        .readdirSync(dir)
        .filter((f) => !f.startsWith('.'))
        .sort(),
      ['ComfyUI_00001_-1.png', 'ComfyUI_00001_.png'],
    );
  });

  it('a file put under the proven name afterwards (same size, other bytes) is not the output', async () => {
    const dir = tempDir('cc-saved-');
    const id = serverJob();
    const output = (await modelJob(id)).outputs[0]!;
    const [saved] = await downloadMissingOutputs(backend, await modelJob(id), dir);
    // Another program replaces the file (written aside, renamed over it): same name, same size.
    const aside = path.join(dir, 'other.tmp');
    fs.writeFileSync(aside, randomBytes(SIZE));
    fs.renameSync(aside, saved!.path);
    assert.equal(await savedOutputPath(output, dir, id), undefined, 'a replaced file was taken for the output');
  });

  it("the proof of one job's output never stands for another job's output", async () => {
    const dir = tempDir('cc-saved-');
    const [a, b] = [serverJob(), serverJob()];
    await downloadMissingOutputs(backend, await modelJob(a), dir);
    assert.equal(await savedOutputPath((await modelJob(b)).outputs[0]!, dir, b), undefined);
    assert.notEqual(outputProofPath(dir, a, `out-${a}`), outputProofPath(dir, b, `out-${a}`));
  });

  it('a proof being written when its process was killed leaves no temporary file once the output is saved again', async () => {
    const dir = tempDir('cc-saved-');
    const id = serverJob();
    const output = (await modelJob(id)).outputs[0]!;
    const leftover = `${outputProofPath(dir, id, output.id)}.0123456789ab.tmp`;
    fs.writeFileSync(leftover, '{"jobId":');
    const [saved] = await downloadMissingOutputs(backend, await modelJob(id), dir);
    assert.equal(fs.existsSync(leftover), false, "the killed process's temporary proof is still there");
    assert.equal((await savedOutputPath(output, dir, id))?.path, saved!.path);
    assert.deepEqual(fs.readdirSync(dir).sort(), [
      path.basename(outputProofPath(dir, id, output.id)),
      'ComfyUI_00001_.png',
    ]);
  });

  it("without a proof (saved before proofs were kept), a file under the output's name is it only when it hashes to the server's hash; then its proof is written", async () => {
    const dir = tempDir('cc-saved-');
    const content = randomBytes(SIZE);
    const id = serverJob({ name: 'hashed.png', hash: await hashBytes(content), content });
    const output = (await modelJob(id)).outputs[0]!;
    fs.writeFileSync(path.join(dir, 'hashed.png'), randomBytes(SIZE));
    assert.equal(await savedOutputPath(output, dir, id), undefined, 'a file of other bytes was taken for the output');
    fs.writeFileSync(path.join(dir, 'hashed.png'), content);
    assert.equal((await savedOutputPath(output, dir, id))?.path, path.join(dir, 'hashed.png'));
    assert.ok(fs.existsSync(outputProofPath(dir, id, output.id)), 'no proof written for the verified file');
    const gets = contentGets();
    await downloadMissingOutputs(backend, await modelJob(id), dir);
    assert.equal(contentGets(), gets);
  });

  describe("a job's folder is made only when there is something to write into it (jobEnds.ts step 2)", () => {
    /** A job-end owner of this server whose folders are made in `root`; each made folder is counted. */
    function owner(root: string): { ends: JobEnds; made: string[]; told: HandledEnd[][] } {
      const made: string[] = [];
      const told: HandledEnd[][] = [];
      const store = new StateStore(tempDir('cc-folder-state-'));
      const jobs = {
        lease: () => Promise.reject(new Error('not leased: the backend is given')),
        follow: () => assert.fail('nothing followed'),
      } as unknown as Pick<JobService, 'lease' | 'follow'>;
      const ends = new JobEnds({
        jobs,
        store,
        log: { info: () => undefined, warn: () => undefined },
        outputDir: async (jobId) => {
          const dir = path.join(root, jobId);
          await fs.promises.mkdir(dir, { recursive: true });
          made.push(jobId);
          return dir;
        },
        tell: (e) => told.push(e),
      });
      return { ends, made, told };
    }

    it('a failed job, a canceled one and a succeeded one without outputs make no folder (each still told once)', async () => {
      const root = tempDir('cc-folder-');
      const { ends, made, told } = owner(root);
      for (const [status, outputs] of [
        ['failed', []],
        ['canceled', []],
        ['succeeded', []],
      ] as const) {
        const id = String(job(status).id);
        const model: Job = { ...(await modelJob(serverJob())), id, status, outputs: [...outputs] };
        const end = await ends.ended(server.origin, model, { backend });
        assert.equal(end.dir, undefined);
      }
      assert.deepEqual(made, [], 'a folder was made for a job with nothing to write');
      assert.deepEqual(fs.readdirSync(root), []);
      assert.equal(told.length, 3);
      // A succeeded job with an output gets its folder, with the output in it.
      const id = serverJob();
      const end = await ends.ended(server.origin, await modelJob(id), { backend });
      assert.deepEqual(made, [id]);
      assert.ok(fs.readFileSync(end.files[0]!).equals(bytes.get(id)!));
      ends.dispose();
    });
  });
});
