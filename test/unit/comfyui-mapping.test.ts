/**
 * The mapping of a ComfyUI server's `/queue` and `/history` into the job model (ComfyUI server API (observed),
 * Reading state; an `execution_error` message's fields as Following a job lists them, not recorded there).
 */
import * as assert from 'node:assert/strict';
import { historyEntryOf, jobOfComfyUI, type KnownJob, type Placement } from '../../src/core/comfyui/mapping';

const KNOWN: KnownJob = { jobOutputs: () => [] };

/** A history placement of status `status_str` and `messages`. */
function history(statusStr: string, messages: unknown[][]): Placement {
  const h = historyEntryOf({ prompt: [0, 'p', {}, {}, []], outputs: {}, status: { status_str: statusStr, messages } });
  return { where: 'history', history: h! };
}

describe('comfyui: /queue and /history into the job model', () => {
  it('status_str "error" with execution_error: failed, naming the exception, node and class', () => {
    const job = jobOfComfyUI(
      'p',
      history('error', [
        ['execution_start', { prompt_id: 'p', timestamp: 1000 }],
        [
          'execution_error',
          {
            prompt_id: 'p',
            node_id: '7',
            node_type: 'KSampler',
            exception_type: 'RuntimeError',
            exception_message: 'out of memory',
            timestamp: 2000,
          },
        ],
      ]),
      KNOWN,
    );
    assert.equal(job.status, 'failed');
    assert.deepEqual(
      [job.error?.code, job.error?.message, job.error?.nodeId, job.error?.classType],
      ['execution_error', 'RuntimeError: out of memory', '7', 'KSampler'],
    );
    assert.deepEqual([job.startedAt, job.completedAt], [new Date(1000).toISOString(), new Date(2000).toISOString()]);
  });

  it('status_str "error" with execution_interrupted: canceled without an error', () => {
    const job = jobOfComfyUI('p', history('error', [['execution_interrupted', { prompt_id: 'p' }]]), KNOWN);
    assert.deepEqual([job.status, job.error], ['canceled', null]);
  });

  it('in neither list: lost, saying a restart forgets; canceled when this client removed it', () => {
    const lost = jobOfComfyUI('p', { where: 'absent', canceledHere: false }, KNOWN);
    assert.equal(lost.status, 'lost');
    assert.match(lost.error?.message ?? '', /restarted/);
    assert.equal(jobOfComfyUI('p', { where: 'absent', canceledHere: true }, KNOWN).status, 'canceled');
  });
});
