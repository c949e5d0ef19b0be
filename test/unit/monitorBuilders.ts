// Builders for the job monitor's tests: a MonitorState in each status, previews and outputs.
import {
  MONITOR_STRINGS,
  PROTOCOL_VERSION,
  type MonitorJob,
  type MonitorOutput,
  type MonitorPreview,
  type MonitorState,
  type MonitorStrings,
} from '../../src/core/views/monitor/protocol';

export const STRINGS: MonitorStrings = { ...MONITOR_STRINGS };

export function monitorJob(status: string, overrides: Partial<MonitorJob> = {}): MonitorJob {
  return {
    jobId: 'job-1',
    workflowName: 'invert.json',
    status,
    connection: 'Local emulator',
    createdAt: '2026-11-23T10:00:00.000Z',
    startedAt: status === 'queued' ? null : '2026-11-23T10:00:01.000Z',
    finishedAt: ['succeeded', 'failed', 'canceled', 'expired'].includes(status) ? '2026-11-23T10:00:09.000Z' : null,
    queuePosition: status === 'queued' ? 0 : null,
    progress: null,
    error: null,
    logs: null,
    metrics: [],
    outputs: [],
    retrying: null,
    can: {
      cancel: !['succeeded', 'failed', 'canceled', 'expired'].includes(status),
      rerun: true,
      openWorkflow: true,
      goToNode: status === 'failed',
      revealOutputs: true,
    },
    ...overrides,
  };
}

export function monitorState(
  status: string,
  overrides: Partial<MonitorJob> = {},
  preview: MonitorPreview | null = null,
  nodeStates: MonitorState['nodeStates'] = {},
): MonitorState {
  return { version: PROTOCOL_VERSION, job: monitorJob(status, overrides), nodeStates, preview, strings: STRINGS };
}

/** A 1×1 PNG as base64. */
export const PNG_1X1 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

export function preview(seq: number, overrides: Partial<MonitorPreview> = {}): MonitorPreview {
  return { seq, nodeId: '3', nodeClass: 'KSampler', contentType: 'image/png', dataBase64: PNG_1X1, ...overrides };
}

export function output(id: string, overrides: Partial<MonitorOutput> = {}): MonitorOutput {
  return {
    id,
    name: `${id}.png`,
    contentType: 'image/png',
    sizeBytes: 2048,
    thumbnail: `data:image/png;base64,${PNG_1X1}`,
    saved: true,
    ...overrides,
  };
}

export function progress(
  value: number | null,
  overrides: Partial<NonNullable<MonitorJob['progress']>> = {},
): NonNullable<MonitorJob['progress']> {
  return {
    value,
    nodesDone: 1,
    nodesTotal: 4,
    currentNode: '3',
    currentNodeClass: 'KSampler',
    step: 21,
    steps: 50,
    message: 'KSampler 21/50',
    ...overrides,
  };
}
