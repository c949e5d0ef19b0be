/**
 * The Job and Asset API v2's wire job mapped into the client's model (src/core/v2/mapping.ts): fields renamed, an
 * output's host-relative link resolved against the request that carried it (design rule 4), links and unknown fields
 * left behind, logs and metrics kept.
 */
import * as assert from 'node:assert/strict';
import { JobSchema } from '../../src/core/v2/schemas';
import { answerOf, jobOf, updateOf } from '../../src/core/v2/mapping';
import { job } from './builders';

describe('v2 mapping: wire job → model job', () => {
  it("rule: every field of a v2 job is in the model under its own name, and the job says it is v2's", () => {
    const wire = JobSchema.parse(
      job('running', {
        queue_position: null,
        progress: {
          value: 0.5,
          nodes_done: 1,
          nodes_total: 3,
          current_node: '2',
          current_node_class: 'KSampler',
          step: 10,
          steps: 20,
          message: 'KSampler 10/20',
        },
        error: { code: 'node_error', message: 'boom', node_id: '2', class_type: 'KSampler', traceback: ['a', 'b'] },
        logs: { lines: ['hello'] },
        metrics: { execution_ms: null, queue_ms: 12 },
      }),
    );
    const model = jobOf(wire, new URL('https://api.example/api/v2/jobs/x'));
    assert.deepEqual(
      { ...model, outputs: undefined },
      {
        id: wire.id,
        api: 'v2',
        status: 'running',
        createdAt: '2026-11-22T10:00:00Z',
        startedAt: '2026-11-22T10:00:01Z',
        completedAt: null,
        expiresAt: '2026-11-23T10:00:00Z',
        queuePosition: null,
        progress: {
          value: 0.5,
          nodesDone: 1,
          nodesTotal: 3,
          currentNode: '2',
          currentNodeClass: 'KSampler',
          step: 10,
          steps: 20,
          message: 'KSampler 10/20',
        },
        error: { code: 'node_error', message: 'boom', nodeId: '2', classType: 'KSampler', traceback: ['a', 'b'] },
        logs: { lines: ['hello'] },
        metrics: { execution_ms: null, queue_ms: 12 },
        outputs: undefined,
      },
    );
    assert.equal('urls' in model, false, "the job's links stay v2's");
  });

  it("rule: an output's host-relative url is resolved against the origin of the request that returned it, never the base URL", () => {
    const wire = JobSchema.parse(
      job('succeeded', {
        outputs: [
          {
            id: 'a1',
            node_id: '3',
            name: 'x.png',
            type: 'image',
            content_type: 'image/png',
            size_bytes: 7,
            hash: 'blake3:00',
            url: '/deployment/d1/api/v2/assets/a1/content',
          },
          { id: 'a2', name: 'y.png' },
        ],
      }),
    );
    const { job: model, requestId } = answerOf({
      job: wire,
      source: new URL('https://edge.example/deployment/d1/api/v2/jobs/1'),
      requestId: 'req-1',
    });
    assert.equal(requestId, 'req-1');
    assert.deepEqual(model.outputs, [
      {
        id: 'a1',
        nodeId: '3',
        name: 'x.png',
        type: 'image',
        contentType: 'image/png',
        sizeBytes: 7,
        hash: 'blake3:00',
        url: 'https://edge.example/deployment/d1/api/v2/assets/a1/content',
      },
      { id: 'a2', nodeId: null, name: 'y.png', type: null, contentType: null, sizeBytes: null, hash: null, url: null },
    ]);
  });

  it("rule: a watch update's progress, preview and output are mapped; its status, mode and retry pass unchanged", () => {
    const source = new URL('https://api.example/api/v2/jobs/1');
    assert.deepEqual(
      updateOf({ type: 'preview', preview: { node_id: '5', content_type: 'image/jpeg', data_base64: 'AA==' } }, source),
      {
        type: 'preview',
        preview: { nodeId: '5', contentType: 'image/jpeg', dataBase64: 'AA==' },
      },
    );
    const output = updateOf(
      {
        type: 'output',
        output: {
          id: 'o',
          node_id: null,
          name: 'n',
          type: null,
          content_type: null,
          size_bytes: null,
          hash: null,
          url: '/c',
          url_expires_at: null,
          job_id: '1',
        },
      },
      source,
    );
    assert.equal(output.type === 'output' && output.output.url, 'https://api.example/c');
    const status = { type: 'status' as const, status: 'queued', queuePosition: 2 };
    assert.equal(updateOf(status, source), status);
  });
});
