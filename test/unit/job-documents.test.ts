// What the Jobs view opens and copies (a job's children): the workflow (the server's, branching on
// `format`, else the remembered file while it is unchanged), the logs (any shape, read tolerantly), the error with its
// traceback, and an output's `core/ASSET` reference.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { V2Client } from '../../src/core/v2/client';
import { V2JobBackend } from '../../src/core/v2/jobBackend';
import { InputError } from '../../src/core';
import { JobSchema } from '../../src/core/v2/schemas';
import { Redactor, canonicalJson, hashBytes } from '../../src/core/util';
import type { JobRecord } from '../../src/core/state';
import {
  MAX_LOG_LINES,
  errorText,
  loadJobWorkflow,
  logsText,
  outputAssetReference,
  workflowDocumentName,
  workflowFormatLabel,
} from '../../src/core/views/jobDocuments';
import { jobOf } from '../../src/core/v2/mapping';
import { invertWorkflow, job as rawJob } from './builders';
import { TERMINAL, submit, until, useEmulator } from './harness';
import { tempDir } from './tmp';

function record(overrides: Partial<JobRecord>): JobRecord {
  return {
    idempotencyKey: `k-${Math.random().toString(36).slice(2)}`,
    baseUrl: 'http://127.0.0.1:1',
    state: 'created',
    submittedAt: '2026-11-22T10:00:00Z',
    ...overrides,
  };
}

describe('job documents: the workflow of a job (GET …/workflow, else the remembered file)', () => {
  const emu = useEmulator();
  let client: V2JobBackend;
  before(() => {
    client = new V2JobBackend(new V2Client({ baseUrl: emu().baseUrl }));
  });
  after(() => client.close());

  it("the server's workflow comes first, with its `format` (api for a v2 submission) and request id", async () => {
    const workflow = invertWorkflow({ prefix: 'docs' });
    const created = await submit(emu(), workflow);
    await until(emu(), created.body.id, (j) => TERMINAL.includes(j.status));
    const got = await loadJobWorkflow(client, { baseUrl: emu().baseUrl, jobId: created.body.id });
    assert.equal(got.source, 'server');
    assert.equal(got.format, 'api');
    assert.deepEqual(got.workflow, workflow);
    assert.ok(got.requestId);
  });

  it("when the server does not return it (404), the remembered file is used while it still hashes to the record's workflowHash", async () => {
    const dir = tempDir('job-docs-');
    const file = path.join(dir, 'flow.json');
    const workflow = invertWorkflow({ prefix: 'file' });
    fs.writeFileSync(file, JSON.stringify(workflow, null, 4)); // formatting differs: the canonical hash does not
    const rec = record({
      baseUrl: emu().baseUrl,
      jobId: 'no-such-job',
      workflowFile: file,
      workflowHash: await hashBytes(canonicalJson(workflow)),
    });
    const misses: string[] = [];
    const got = await loadJobWorkflow(
      client,
      { baseUrl: emu().baseUrl, jobId: 'no-such-job', record: rec },
      { onServerMiss: (why) => misses.push(why) },
    );
    assert.equal(got.source, 'file');
    assert.equal(got.format, 'api');
    assert.deepEqual(got.workflow, workflow);
    assert.match(misses[0]!, /not_found/);
  });

  it("a remembered file changed since the submission is not the job's workflow: no_workflow, saying so", async () => {
    const dir = tempDir('job-docs-');
    const file = path.join(dir, 'flow.json');
    fs.writeFileSync(file, JSON.stringify(invertWorkflow({ prefix: 'edited' })));
    const rec = record({
      workflowFile: file,
      workflowHash: await hashBytes(canonicalJson(invertWorkflow({ prefix: 'original' }))),
    });
    await assert.rejects(
      loadJobWorkflow(client, { baseUrl: rec.baseUrl, jobId: 'j', record: rec }),
      (err: unknown) =>
        InputError.is(err) && err.code === 'no_workflow' && /changed since the job was submitted/.test(err.message),
    );
  });

  it("another server's job is never asked of the active one; without an id and a file there is no workflow", async () => {
    const before = emu().requests.length;
    await assert.rejects(
      loadJobWorkflow(client, { baseUrl: 'http://other.example', jobId: 'j' }),
      (err: unknown) => InputError.is(err) && err.code === 'no_workflow' && /another server/.test(err.message),
    );
    await assert.rejects(
      loadJobWorkflow(client, {
        baseUrl: emu().baseUrl,
        jobId: undefined,
        record: record({ state: 'outcome_unknown' }),
      }),
      (err: unknown) => InputError.is(err) && err.code === 'no_workflow',
    );
    assert.equal(emu().requests.length, before, 'a request was sent');
  });

  it('the document branches on `format`: its name and words say API format or UI format (save), another value as is', () => {
    assert.equal(workflowDocumentName('api'), 'workflow.api.json');
    assert.equal(workflowDocumentName('save'), 'workflow.ui.json');
    assert.equal(workflowDocumentName('future'), 'workflow.json');
    assert.equal(workflowFormatLabel('api'), 'API format');
    assert.equal(workflowFormatLabel('save'), 'UI format');
    assert.equal(workflowFormatLabel('x\u001b'), 'format x\\x1b');
  });
});

describe('job documents: logs, error, asset reference', () => {
  it('logs of any shape become lines: a string, strings, {time, level, message} items, an object holding them, else JSON', () => {
    assert.equal(logsText('a\nb\n'), 'a\nb\n');
    assert.equal(logsText(['a', 'b']), 'a\nb\n');
    assert.equal(
      logsText({ lines: [{ time: 'T', level: 'info', message: 'hi' }, { message: 'two\nlines' }] }),
      'T INFO hi\ntwo\nlines\n',
    );
    assert.equal(logsText({ entries: [{ msg: 'x', severity: 'warn' }] }), 'WARN x\n');
    assert.equal(logsText({ stdout: 'out', stderr: 'err' }), '--- stdout ---\nout\n--- stderr ---\nerr\n');
    assert.equal(logsText({ text: 'only' }), 'only\n');
    assert.equal(logsText({ odd: 1 }), '{\n  "odd": 1\n}\n');
    assert.equal(logsText(undefined), '');
  });

  it('every log line is cleaned on its own: a server line never forges another, never hides a key or a bidi override', () => {
    const secret = 'sk-live-abcdef123456';
    const redactor = new Redactor([secret]);
    const text = logsText([`a\u001b[2J ${secret}`, 'b\r\u202ec'], (t) => redactor.clean(t));
    assert.equal(text, 'a\\x1b[2J «redacted»\nb\\r\\u202ec\n');
  });

  it(`logs are bounded: at most ${MAX_LOG_LINES} lines, then a count of the rest`, () => {
    const text = logsText(Array.from({ length: MAX_LOG_LINES + 5 }, (_, i) => `l${i}`));
    const lines = text.trimEnd().split('\n');
    assert.equal(lines.length, MAX_LOG_LINES + 1);
    assert.equal(lines.at(-1), '… 5 more lines not shown');
  });

  it('the error document has code, message, node id and class_type, then the traceback line by line', () => {
    const { error } = jobOf(
      JobSchema.parse(
        rawJob('failed', {
          error: {
            code: 'node_execution_error',
            message: 'boom',
            node_id: '3',
            class_type: 'KSampler',
            traceback: 'Traceback:\n  File "x"\n',
          },
        }),
      ),
      undefined,
    );
    assert.equal(
      errorText(error!),
      'Code: node_execution_error\nMessage: boom\nNode: 3\nNode class: KSampler\n\nTraceback:\nTraceback:\n  File "x"\n',
    );
    const bare = jobOf(JobSchema.parse(rawJob('failed', { error: { message: 'x' } })), undefined).error!;
    assert.match(
      errorText(bare),
      /Code: none given\nMessage: x\nNode: not given\nNode class: not given\n\nThe server gave no traceback\.\n$/,
    );
    const listed = jobOf(
      JobSchema.parse(rawJob('failed', { error: { code: 'c', traceback: ['line 1\n', 'line 2\n'] } })),
      undefined,
    ).error!;
    assert.match(errorText(listed), /Traceback:\nline 1\nline 2\n$/);
  });

  it("an output's asset reference is the core/ASSET object: info.id, and the hash and file_path hints when given", () => {
    const out = jobOf(
      JobSchema.parse(
        rawJob('succeeded', {
          outputs: [
            { id: 'a1', name: 'x.png', hash: 'blake3:ab' },
            { id: 'a2', hash: null },
          ],
        }),
      ),
      undefined,
    ).outputs;
    assert.deepEqual(outputAssetReference(out[0]!), {
      __type: 'core/ASSET',
      info: { id: 'a1', hash: 'blake3:ab', file_path: 'x.png' },
    });
    assert.deepEqual(outputAssetReference(out[1]!), { __type: 'core/ASSET', info: { id: 'a2' } });
  });
});
