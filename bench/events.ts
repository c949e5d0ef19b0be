/**
 * The event pipeline (SSE parse + JSON + zod validation, readJobEvents) in events per second, against
 * eventsource-parser alone on the same bytes, side by side in one run. Then what the job monitor posts to its page
 * per progress event of a 500-node job: the whole snapshot (before) against the delta (after: the job and the nodes'
 * states that changed, core/views/monitor/delta.ts), in bytes of JSON.
 */
import { Readable } from 'node:stream';
import { createParser } from 'eventsource-parser';
import { workflowGraph } from '../src/core/graph/model';
import { keepSeenStates } from '../src/core/graph/runStates';
import type { NodeRunState } from '../src/core/graph/types';
import type { Job } from '../src/core/jobs/model';
import { untranslated } from '../src/core/util/l10n';
import { readJobEvents } from '../src/core/v2/events';
import { MonitorPosts } from '../src/core/views/monitor/delta';
import { monitorJob, monitorNodeStates, monitorState, monitorStrings } from '../src/core/views/monitor/monitorPage';
import { bigApiWorkflow } from './graphWorkflows';
import { row, timed } from './util';

function frames(count: number): Buffer[] {
  const chunks: Buffer[] = [];
  let text = '';
  for (let i = 0; i < count; i++) {
    const value = i / count;
    text +=
      i % 10 === 0
        ? `event: status\ndata: {"status":"running","queue_position":null}\n\n`
        : `event: progress\ndata: {"value":${value},"nodes_done":${i % 7},"nodes_total":7,"current_node":"${i % 7}","current_node_class":"KSampler","step":${i % 50},"steps":50,"message":"KSampler ${i % 50}/50"}\n\n`;
    if (text.length > 16_384) {
      chunks.push(Buffer.from(text));
      text = '';
    }
  }
  chunks.push(Buffer.from(text));
  return chunks;
}

export async function benchEvents(count: number): Promise<void> {
  const chunks = frames(count);
  const parserOnly = await timed(async () => {
    let n = 0;
    const parser = createParser({ onEvent: () => n++ });
    const decoder = new TextDecoder();
    for (const c of chunks) parser.feed(decoder.decode(c, { stream: true }));
    return n;
  });
  const ours = await timed(async () => {
    let n = 0;
    for await (const _ of readJobEvents(Readable.from(chunks))) n++;
    return n;
  });
  if (ours.value !== parserOnly.value) throw new Error(`event counts differ: ${ours.value} vs ${parserOnly.value}`);
  row(`events ${count}`, {
    ours_ev_s: count / (ours.ms / 1000),
    parser_only_ev_s: count / (parserOnly.ms / 1000),
    ratio_time: ours.ms / parserOnly.ms,
  });
  benchMonitorEvent(500);
}

/**
 * Bytes the monitor posts per progress event at `count` nodes: a step of the running node (the middle one), made as
 * the host makes it (monitorPanel.ts: the nodes' states kept as seen, then core `MonitorPosts`).
 */
function benchMonitorEvent(count: number): void {
  const made = workflowGraph(bigApiWorkflow(count));
  if (!('model' in made)) throw new Error(made.problem);
  const nodes = made.model.root.nodes.filter((n) => n.kind === 'node');
  const current = nodes[Math.floor(nodes.length / 2)]!;
  const clean = (s: string): string => s;
  const job = (step: number): Job => ({
    id: '3f0c2a9e-5d7b-4c1e-9a4f-8b2d6e1c0a77',
    api: 'v2',
    status: 'running',
    createdAt: '2026-11-26T10:00:00Z',
    startedAt: '2026-11-26T10:00:01Z',
    completedAt: null,
    expiresAt: null,
    queuePosition: null,
    progress: {
      value: 0.5,
      nodesDone: nodes.length / 2,
      nodesTotal: nodes.length,
      currentNode: current.id,
      currentNodeClass: current.classType,
      step,
      steps: 20,
      message: `${current.classType} ${step}/20`,
    },
    outputs: [],
    error: null,
    metrics: {},
  });
  let seen: Record<string, NodeRunState> = {};
  const [before, after] = [7, 8].map((step) => {
    const j = job(step);
    seen = keepSeenStates(seen, monitorNodeStates(j, made.model, clean), j, { clean });
    const mj = monitorJob({ jobId: j.id, job: j, connection: 'Comfy Cloud' }, clean, untranslated);
    return monitorState(mj, null, monitorStrings(untranslated), seen);
  });
  const bytes = (message: unknown): number => Buffer.byteLength(JSON.stringify(message));
  // Before: every event posted the whole state. After: the page holds the first snapshot; the event is a delta.
  const posts = new MonitorPosts();
  posts.next(before!, true);
  const whole = bytes({ type: 'snapshot', state: after });
  const delta = bytes(posts.next(after!, true));
  row(`monitor progress event ${nodes.length} nodes`, {
    before_whole_bytes: whole,
    after_delta_bytes: delta,
    ratio: delta / whole,
  });
}
