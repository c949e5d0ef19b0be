/**
 * Watching a v1 job (watch.ts; Cloud API v1 (deprecated), Events): the socket opened before the POST, a bounded
 * backlog of early events, every message filtered by prompt_id, binary previews, and the final state from the status
 * endpoint (States and transitions), reported as the job model's JobUpdates. Against small hostile `node:http` + `ws`
 * servers, on a ManualClock.
 */
import * as assert from 'node:assert/strict';
import { OTHER, PROMPT, ref, run } from './v1-watch.fixtures';
import { JPEG_BYTES, PNG_BYTES, metadataPreviewFrame, previewFrame, textFrame } from './v1Server';

describe('v1 watching (watch.ts; Cloud API v1 (deprecated), Events, and States and transitions)', () => {
  it("the socket is open before the prompt is posted, with the socket's clientId: events sent right after the POST are not lost", async () => {
    const { result, updates, server, promptBodies } = await run({
      statuses: ['executing', 'executing', 'executing', 'success'],
      afterPost: (s) =>
        s.broadcast({
          type: 'executed',
          data: { prompt_id: PROMPT, node: '3', output: { images: [ref('early.png')] } },
        }),
    });
    assert.match(server.log[0], /^ws-open /, `log: ${server.log.join(', ')}`);
    assert.equal(server.log[1], 'POST /api/prompt');
    assert.equal(
      (promptBodies[0] as { client_id?: string }).client_id,
      server.sockets[0].url.searchParams.get('clientId'),
    );
    assert.deepEqual(
      updates.filter((u) => u.type === 'output').map((u) => u.type === 'output' && u.output.name),
      ['early.png'],
    );
    // Both confirmation endpoints answer 404 here, so the executed event's output stands.
    assert.deepEqual(
      result.final.job.outputs.map((o) => o.name),
      ['early.png'],
    );
    assert.equal(result.final.job.status, 'succeeded');
  });

  it('events that arrive before the POST is answered are kept (a bounded backlog) and filtered once the prompt_id is known', async () => {
    const { result, updates } = await run({
      statuses: ['executing', 'executing', 'executing', 'success'],
      beforeAnswer: async (s) => {
        await s.broadcast({ type: 'execution_start', data: { prompt_id: PROMPT } });
        await s.broadcast({
          type: 'executed',
          data: { prompt_id: OTHER, node: '3', output: { images: [ref('theirs-early.png')] } },
        });
        await s.broadcast({
          type: 'executed',
          data: { prompt_id: PROMPT, node: '3', output: { images: [ref('before-answer.png')] } },
        });
      },
    });
    assert.deepEqual(
      updates.filter((u) => u.type === 'output').map((u) => u.type === 'output' && u.output.name),
      ['before-answer.png'],
    );
    assert.deepEqual(
      result.final.job.outputs.map((o) => o.name),
      ['before-answer.png'],
    );
  });

  it("every message is filtered by prompt_id: another job's executed on the same socket never becomes our output", async () => {
    const { result, updates } = await run({
      statuses: ['executing', 'executing', 'executing', 'success'],
      afterPost: async (s) => {
        await s.broadcast({
          type: 'executed',
          data: { prompt_id: OTHER, node: '3', output: { images: [ref('theirs.png')] } },
        });
        await s.broadcast({ type: 'executed', data: { node: '3', output: { images: [ref('nobodys.png')] } } });
        await s.broadcast({
          type: 'executed',
          data: { prompt_id: PROMPT, node: '3', output: { images: [ref('ours.png'), ref('preview.png', 'temp')] } },
        });
      },
    });
    assert.deepEqual(
      updates.filter((u) => u.type === 'output').map((u) => u.type === 'output' && u.output.name),
      ['ours.png'],
    );
    assert.deepEqual(
      result.final.job.outputs.map((o) => o.name),
      ['ours.png'],
    );
  });

  it("previews: a type-4 frame is ours only by its prompt_id; a type-1 frame only while our prompt is the one executing; decoded bytes and MIME type as v2's preview", async () => {
    const { updates } = await run({
      statuses: ['executing', 'executing', 'executing', 'executing', 'success'],
      afterPost: async (s) => {
        await s.broadcast(
          metadataPreviewFrame(
            { node_id: '2', display_node_id: '2', real_node_id: '2', prompt_id: OTHER, parent_node_id: null },
            PNG_BYTES,
          ),
        );
        await s.broadcast(
          metadataPreviewFrame(
            { node_id: '1', display_node_id: '1', real_node_id: '1', prompt_id: PROMPT, parent_node_id: null },
            JPEG_BYTES,
          ),
        );
        await s.broadcast({ type: 'executing', data: { prompt_id: OTHER, node: '5' } });
        await s.broadcast(previewFrame(2, Buffer.from('THEIRS')));
        await s.broadcast(textFrame('5', 'theirs 1/2'));
        await s.broadcast({ type: 'executing', data: { prompt_id: PROMPT, node: '1' } });
        await s.broadcast(previewFrame(2, PNG_BYTES));
        await s.broadcast(Buffer.from([0, 0, 0, 4, 0, 0, 1, 0])); // truncated: counted, ignored
        await s.broadcast(textFrame('1', 'ours 1/2'));
      },
    });
    const previews = updates.flatMap((u) => (u.type === 'preview' ? [u.preview] : []));
    assert.deepEqual(
      previews.map((p) => [p.nodeId, p.contentType, Buffer.from(p.dataBase64, 'base64').toString('hex')]),
      [
        ['1', 'image/jpeg', JPEG_BYTES.toString('hex')],
        ['1', 'image/png', PNG_BYTES.toString('hex')],
      ],
    );
    const messages = updates.flatMap((u) => (u.type === 'progress' && u.progress.message ? [u.progress.message] : []));
    assert.deepEqual(messages, ['ours 1/2']);
  });

  it('the final state comes from the status endpoint: execution_success on the socket alone does not end the watch', async () => {
    const { result, statusCalls } = await run({
      statuses: ['executing', 'executing', 'executing', 'executing', 'executing', 'error'],
      afterPost: async (s) => {
        await s.broadcast({ type: 'execution_success', data: { prompt_id: PROMPT } });
        await s.broadcast({ type: 'executing', data: { prompt_id: PROMPT, node: null } });
      },
    });
    assert.equal(statusCalls, 6);
    assert.equal(result.final.job.status, 'failed');
    assert.equal(result.final.job.error?.code, 'error', "the v1 status is the error's code");
  });

  it('an unknown status value (weird_new_state) keeps polling; completed ends the watch as succeeded', async () => {
    const { result, statusCalls, updates } = await run({
      statuses: ['weird_new_state', 'weird_new_state', 'weird_new_state', 'completed'],
    });
    assert.equal(statusCalls, 4);
    assert.equal(result.final.job.status, 'succeeded');
    const statuses = updates.flatMap((u) => (u.type === 'status' ? [u.status] : []));
    assert.deepEqual(statuses, ['queued', 'succeeded']);
  });

  it('lost ends the watch as failed with a reason; cancelled as canceled', async () => {
    const lost = await run({ statuses: ['submitted', 'lost'] });
    assert.equal(lost.result.final.job.status, 'failed');
    assert.equal(lost.result.final.job.error?.code, 'lost');
    const cancelled = await run({ statuses: ['cancel_requested', 'cancelled'] });
    assert.equal(cancelled.result.final.job.status, 'canceled');
    assert.deepEqual(
      cancelled.updates.flatMap((u) => (u.type === 'status' ? [u.status] : [])),
      ['canceling', 'canceled'],
    );
  });

  it("execution_error of our prompt becomes the failed job's error (with the engine's exception)", async () => {
    const { result } = await run({
      statuses: ['executing', 'executing', 'executing', 'error'],
      afterPost: async (s) => {
        await s.broadcast({
          type: 'execution_error',
          data: { prompt_id: OTHER, exception_type: 'Nope', exception_message: 'not ours' },
        });
        await s.broadcast({
          type: 'execution_error',
          data: {
            prompt_id: PROMPT,
            node_id: '1',
            node_type: 'EmptyImage',
            exception_type: 'ValueError',
            exception_message: 'width must be > 0',
            traceback: ['x'],
          },
        });
      },
    });
    assert.equal(result.final.job.error?.message, 'ValueError: width must be > 0');
    assert.equal(result.final.job.error?.nodeId, '1');
    assert.equal(result.final.job.error?.classType, 'EmptyImage');
  });
});
