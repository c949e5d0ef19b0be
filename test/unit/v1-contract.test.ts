/**
 * The v1 client core (src/core/v1) against the in-process emulator's v1 surface, one test per rule of
 * Cloud API v1 (deprecated): frames decoded exactly, a whole job, other jobs' frames ignored, a dead
 * socket falling back to polling, both status vocabularies, the history fallback, the upload forms, a refused prompt,
 * the partner key.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PNG } from 'pngjs';
import type { JobUpdate } from '../../src/core';
import { V1Client, V1PromptError, decodeBinaryFrame, submitAndWatch } from '../../src/core/v1';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator';
import { invertWorkflow } from './builders';
import { solidPng, useEmulator } from './harness';
import { tempDir } from './tmp';

const KEY = 'v1-contract-key';
const FIXTURES = path.join(__dirname, '..', '..', '..', 'test', 'fixtures', 'v1');
const fixture = (name: string): Buffer => fs.readFileSync(path.join(FIXTURES, name));

/** The first pixel's RGB and the size of a PNG. */
function pngOf(bytes: Buffer): { width: number; height: number; rgb: number[] } {
  const png = PNG.sync.read(bytes);
  return { width: png.width, height: png.height, rgb: [...png.data.subarray(0, 3)] };
}

function clientOf(emu: Emulator): V1Client {
  return new V1Client({ baseUrl: emu.baseUrl, apiKey: KEY });
}

/** Runs `fn` against an emulator of its own (own options), closed afterwards. */
async function withEmulator(
  options: EmulatorOptions,
  fn: (emu: Emulator, c: V1Client) => Promise<void>,
): Promise<void> {
  const emu = await startEmulator({ port: 0, tokens: [KEY], ...options });
  const c = clientOf(emu);
  try {
    await fn(emu, c);
  } finally {
    await c.close();
    await emu.close();
  }
}

/** Fast polling, so a watch that lost its socket ends promptly. */
const FAST = { pollInitialMs: 20, pollMaxMs: 100 };

describe('v1 contract: binary frames (Cloud API v1 (deprecated), Events)', () => {
  it('rule: TEXT (type 3) decodes to its node id and UTF-8 text', () => {
    assert.deepEqual(decodeBinaryFrame(fixture('text-node1.bin')), {
      kind: 'text',
      nodeId: '1',
      text: 'running EmptyImage (node 1), 1 of 3',
    });
  });

  it('rule: PREVIEW_IMAGE (type 1) with image_type 2 decodes to the PNG bytes exactly', () => {
    const bytes = fixture('preview-image-png-node1.bin');
    const frame = decodeBinaryFrame(bytes);
    assert.equal(frame.kind, 'preview');
    if (frame.kind !== 'preview') return;
    assert.equal(frame.contentType, 'image/png');
    assert.ok(frame.image.equals(bytes.subarray(8)), 'the image is the bytes after the 8-byte header');
    assert.deepEqual(pngOf(frame.image), { width: 64, height: 64, rgb: [255, 0, 0] });
    assert.equal(frame.metadata, undefined);
  });

  it('rule: PREVIEW_IMAGE_WITH_METADATA (type 4) decodes its JSON metadata and the PNG after it', () => {
    const bytes = fixture('preview-with-metadata-node2.bin');
    const frame = decodeBinaryFrame(bytes);
    assert.equal(frame.kind, 'preview');
    if (frame.kind !== 'preview') return;
    assert.deepEqual(frame.metadata, {
      node_id: '2',
      display_node_id: '2',
      real_node_id: '2',
      prompt_id: '00000000-0000-4000-8000-000000000000',
      parent_node_id: null,
    });
    assert.ok(frame.image.equals(bytes.subarray(8 + 129)));
    assert.equal(frame.contentType, 'image/png');
    assert.deepEqual(pngOf(frame.image), { width: 64, height: 64, rgb: [0, 255, 255] });
  });
});

describe('v1 contract: a whole job', () => {
  const emu = useEmulator({ tokens: [KEY] });

  it('rule: submitAndWatch reports progress and a preview, ends succeeded, and downloads the outputs via /api/view with no credential on the 302', async () => {
    const c = clientOf(emu());
    const dir = tempDir('cc-v1c-');
    const updates: JobUpdate[] = [];
    try {
      const run = await submitAndWatch(c, invertWorkflow({ prefix: 'whole' }), {
        onUpdate: (u) => updates.push(u),
        outputDir: dir,
        ...FAST,
      });
      assert.equal(run.final.job.status, 'succeeded');
      assert.ok(
        updates.some((u) => u.type === 'progress'),
        'progress',
      );
      assert.ok(
        updates.some((u) => u.type === 'preview'),
        'a preview',
      );
      assert.equal(run.files.length, 1);
      assert.deepEqual(pngOf(fs.readFileSync(run.files[0].path)), { width: 64, height: 64, rgb: [0, 255, 255] });
      const view = emu().requests.filter((r) => r.path.includes('/api/view'));
      assert.ok(
        view.length > 0 && view.every((r) => r.headers['x-api-key'] === KEY),
        'the view request carries the key',
      );
      const signed = emu().signedRequests;
      assert.ok(signed.length > 0, 'the 302 was followed');
      assert.ok(
        signed.every((r) => r.headers['x-api-key'] === undefined && r.headers.authorization === undefined),
        'no credential to the signed URL',
      );
    } finally {
      await c.close();
    }
  });

  it("rule: frames of another job on the same socket are ignored (its outputs and previews are not this job's)", async () => {
    const c = clientOf(emu());
    const other = clientOf(emu());
    const updates: JobUpdate[] = [];
    try {
      // A second job submitted alongside: the cloud sends every job of the key on every socket of the key.
      const [run] = await Promise.all([
        submitAndWatch(c, invertWorkflow({ prefix: 'mine' }), { onUpdate: (u) => updates.push(u), ...FAST }),
        other.submit(invertWorkflow({ prefix: 'theirs', color: 0x00ff00 })),
      ]);
      assert.equal(run.final.job.status, 'succeeded');
      const outputs = run.final.job.outputs ?? [];
      assert.equal(outputs.length, 1, JSON.stringify(outputs));
      for (const u of updates)
        if (u.type === 'output') assert.equal(u.output.id, outputs[0].id, "another job's output was reported");
      // The one output is this job's image (red inverted: cyan), not the other's (green inverted: magenta).
      const files = await c.downloadOutputs(run.final.job, tempDir('cc-v1two-'));
      assert.deepEqual(pngOf(fs.readFileSync(files[0].path)).rgb, [0, 255, 255]);
    } finally {
      await c.close();
      await other.close();
    }
  });

  it('rule: a refused prompt throws V1PromptError (invalid_workflow) with the node errors, and creates no job', async () => {
    const c = clientOf(emu());
    const before = emu().v1!.prompts.length;
    try {
      const err = await c.submit(invertWorkflow({ width: 0 })).then(
        () => assert.fail('accepted'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof V1PromptError, String(err));
      assert.equal(err.code, 'invalid_workflow');
      assert.ok(
        err.nodeErrors.some((n) => n.nodeId === '1' && n.field === 'width'),
        JSON.stringify(err.nodeErrors),
      );
      assert.equal(emu().v1!.prompts.length, before);
    } finally {
      await c.close();
    }
  });

  it('rule: the partner key goes as extra_data.api_key_svc_org, and extra_data only with it', async () => {
    const c = clientOf(emu());
    try {
      const a = await c.submit(invertWorkflow({ prefix: 'pk' }), { partnerKey: 'partner-k' });
      const rec = emu().v1!.prompts.find((p) => p.promptId === a.promptId)!;
      assert.equal(rec.partnerKey, 'partner-k');
      assert.deepEqual([...rec.extraDataKeys], ['api_key_svc_org']);
      const b = await c.submit(invertWorkflow({ prefix: 'nopk' }));
      const none = emu().v1!.prompts.find((p) => p.promptId === b.promptId)!;
      assert.equal(none.partnerKey, null);
      assert.deepEqual([...none.extraDataKeys], []);
    } finally {
      await c.close();
    }
  });

  it('rule: upload forms: an image as input or temp (overwrite sent), a mask with its original_ref', async () => {
    const c = clientOf(emu());
    const file = path.join(tempDir('cc-v1up-'), 'pic.png');
    fs.writeFileSync(file, solidPng(8, 8, [9, 8, 7]));
    try {
      const input = await c.uploadImage(file);
      assert.equal(input.name.length > 0, true);
      const temp = await c.uploadImage(file, { type: 'temp', overwrite: true });
      assert.equal(temp.type, 'temp');
      const mask = await c.uploadMask(file, { filename: input.name, subfolder: input.subfolder ?? '', type: 'input' });
      assert.ok(mask.name.length > 0);
      assert.ok(emu().requests.some((r) => r.method === 'POST' && r.path.endsWith('/api/upload/mask')));
    } finally {
      await c.close();
    }
  });
});

describe('v1 contract: degraded servers', () => {
  it('rule: a socket that dies after a few frames (v1:ws:dropAfter) → the job still ends succeeded, with its outputs', async () => {
    await withEmulator({ faults: { rules: ['v1:ws:dropAfter=2'] } }, async (_emu, c) => {
      const run = await submitAndWatch(c, invertWorkflow({ prefix: 'drop' }), FAST);
      assert.equal(run.final.job.status, 'succeeded');
      assert.equal(run.final.job.outputs?.length, 1);
    });
  });

  it('rule: a socket refused (v1:ws:status=503) → polling is said, and the job still ends succeeded', async () => {
    await withEmulator({ faults: { rules: ['v1:ws:status=503'] } }, async (_emu, c) => {
      const updates: JobUpdate[] = [];
      const run = await submitAndWatch(c, invertWorkflow({ prefix: 'refused' }), {
        onUpdate: (u) => updates.push(u),
        ...FAST,
      });
      assert.ok(
        updates.some((u) => u.type === 'mode' && u.mode === 'polling'),
        JSON.stringify(updates.filter((u) => u.type === 'mode')),
      );
      assert.equal(run.final.job.status, 'succeeded');
      assert.equal(run.final.job.outputs?.length, 1);
    });
  });

  for (const vocabulary of ['document', 'public'] as const) {
    it(`rule: the ${vocabulary} status vocabulary (${vocabulary === 'document' ? 'success' : 'completed'}) maps to succeeded`, async () => {
      await withEmulator({ v1: { statusVocabulary: vocabulary } }, async (_emu, c) => {
        const run = await submitAndWatch(c, invertWorkflow({ prefix: vocabulary }), FAST);
        assert.equal(
          (await c.status(run.submission.promptId)).status,
          vocabulary === 'document' ? 'success' : 'completed',
        );
        assert.equal(run.final.job.status, 'succeeded');
        assert.equal(run.final.job.outputs?.length, 1);
      });
    });
  }

  it('rule: without GET /api/jobs/{id} (404) the outputs come from /api/history_v2/{id}', async () => {
    await withEmulator({ v1: { jobsEndpoint: false } }, async (emu, c) => {
      const run = await submitAndWatch(c, invertWorkflow({ prefix: 'hist' }), FAST);
      assert.equal(run.final.job.status, 'succeeded');
      const outs = await c.outputs(run.submission.promptId);
      assert.equal(outs?.source, 'history');
      assert.equal(outs?.outputs.length, 1);
      assert.ok(emu.requests.some((r) => r.path.includes('/api/history_v2/')));
    });
  });
});
