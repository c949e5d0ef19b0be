/**
 * Turns what the shared job engine publishes (v2/events.ts: `status`, `progress`, `preview`, `output` of a job)
 * into the v1 WebSocket's messages for jobs submitted through v1 (Cloud API v1 (deprecated), Events), sent to every
 * connection of the job's owner, each JSON message with `data.prompt_id`:
 *
 * - job starts: `status` (queue), `execution_start`, `execution_cached` (`nodes: []`: the emulator caches nothing);
 * - node starts: `executing` `{node, display_node}`, `progress_state`, then a binary TEXT frame (the node's
 *   progress text);
 * - preview of an image node: a binary PREVIEW_IMAGE (PNG, type 2) frame, or PREVIEW_IMAGE_WITH_METADATA for a
 *   connection that declared the feature; the PNG is the engine's real preview of that node's first image;
 * - node finishes: `progress` `{value, max, node}` (the emulator's nodes have no sampling steps: `value`/`max`
 *   count the graph's nodes done and in all), `executed` `{node, display_node, output: {images: [file refs]}}`
 *   when the node produced files, `progress_state`;
 * - job ends: `execution_success`, `execution_error` `{node_id, node_type, exception_type, exception_message,
 *   traceback, …}` or `execution_interrupted`; then `executing` with `node: null` (the document: an empty node
 *   means the execution is complete), then `status`. A queued job cancelled before it ran ends with `status` only.
 * Messages are built when the engine reports, so their order is the engine's.
 */
import type { AssetStore } from '../v2/assets';
import { EventHub, type StreamEvent } from '../v2/events';
import type { JobStore } from '../v2/jobs';
import {
  isTerminal,
  type JobStatus,
  type WireOutput,
  type WirePreview,
  type WireProgress,
  type WireStatusEvent,
} from '../v2/wire';
import { previewFrame, textFrame } from './frames';
import type { SocketHub, SocketMessage } from './socket';
import { contentName, type FileRef, type V1Job, type V1State } from './state';

/**
 * The engine's event hub with a tap: every event published for a job is also handed to `tap`, after the v2
 * streams got it. The job store publishes through it, so v1 sees exactly what v2's streams see.
 */
export class TappedEventHub extends EventHub {
  /** Set once the v1 surface exists (the hub is made before it). */
  tap: ((jobId: string, event: StreamEvent) => void) | undefined;

  override publish(jobId: string, event: StreamEvent): void {
    super.publish(jobId, event);
    this.tap?.(jobId, event);
  }
}

/** What the translator needs. */
interface EngineMessagesOptions {
  readonly state: V1State;
  readonly sockets: () => SocketHub;
  readonly jobs: JobStore;
  readonly assets: AssetStore;
  readonly now: () => number;
}

/** The v1 messages of the engine's events. */
export class EngineMessages {
  constructor(private readonly options: EngineMessagesOptions) {}

  /** The `status` message of `owner`'s queue; `promptId` names the job whose change caused it. */
  statusMessage(owner: string, promptId?: string): SocketMessage {
    let remaining = 0;
    for (const job of this.options.state.jobs.values())
      if (job.owner === owner && !isTerminal(job.lastStatus)) remaining++;
    // The document's flat `queue_remaining`, and the engine's nested `status.exec_info.queue_remaining` that its
    // own clients read: both, so either reading works.
    return {
      type: 'status',
      data: {
        queue_remaining: remaining,
        status: { exec_info: { queue_remaining: remaining } },
        ...(promptId === undefined ? {} : { prompt_id: promptId }),
      },
    };
  }

  /** Handles one event of job `jobId` (ignored unless the job was submitted through v1). */
  handle(jobId: string, event: StreamEvent): void {
    const job = this.options.state.jobs.get(jobId);
    if (job === undefined) return;
    switch (event.event) {
      case 'status':
        return this.onStatus(job, event.data as WireStatusEvent);
      case 'progress':
        return this.onProgress(job, event.data as WireProgress);
      case 'preview':
        return this.onPreview(job, event.data as WirePreview);
      case 'output':
        return this.onOutput(job, event.data as WireOutput);
    }
  }

  private json(job: V1Job, type: string, data: Record<string, unknown>): void {
    this.options.sockets().send(job.owner, { json: { type, data: { ...data, prompt_id: job.record.id } } });
  }

  private timestamp(): number {
    return this.options.now();
  }

  private onStatus(job: V1Job, event: WireStatusEvent): void {
    const previous = job.lastStatus;
    const status = event.status as JobStatus;
    job.lastStatus = status;
    const promptId = job.record.id;
    if (status === 'queued') {
      this.options.sockets().send(job.owner, { json: this.statusMessage(job.owner, promptId) });
      return;
    }
    if (status === 'running') {
      this.options.sockets().send(job.owner, { json: this.statusMessage(job.owner, promptId) });
      this.record(job, 'execution_start', { timestamp: this.timestamp() });
      this.record(job, 'execution_cached', { nodes: [], timestamp: this.timestamp() });
      return;
    }
    if (!isTerminal(status)) return; // canceling: nothing until it ends
    const ran = previous === 'running' || previous === 'canceling';
    if (status === 'succeeded') this.record(job, 'execution_success', { timestamp: this.timestamp() });
    else if (status === 'failed') {
      const error = job.record.error;
      const nodeId = error?.node_id ?? null;
      this.record(job, 'execution_error', {
        node_id: nodeId,
        node_type: error?.class_type ?? null,
        executed: [...job.executed],
        exception_type: error?.code === 'node_execution_error' ? 'RuntimeError' : 'Exception',
        exception_message: error?.message ?? 'the job failed',
        traceback: [],
        current_inputs: {},
        current_outputs: {},
        timestamp: this.timestamp(),
      });
    } else if (status === 'canceled' && ran) {
      const current = [...job.started].find((id) => !job.executed.includes(id)) ?? null;
      this.record(job, 'execution_interrupted', {
        node_id: current,
        node_type: current === null ? null : this.classOf(job, current),
        executed: [...job.executed],
        timestamp: this.timestamp(),
      });
    }
    if (ran) this.json(job, 'executing', { node: null, display_node: null });
    this.options.sockets().send(job.owner, { json: this.statusMessage(job.owner, promptId) });
  }

  /** Sends an `execution_*` message and keeps it for the history's `status.messages`. */
  private record(job: V1Job, type: string, data: Record<string, unknown>): void {
    job.messages.push([type, { ...data, prompt_id: job.record.id }]);
    this.json(job, type, data);
  }

  private classOf(job: V1Job, nodeId: string): string | null {
    return job.record.plan.steps.find((s) => s.nodeId === nodeId)?.classType ?? null;
  }

  private onProgress(job: V1Job, progress: WireProgress): void {
    const node = progress.current_node;
    if (node === null) return;
    if (!job.started.has(node)) {
      job.started.add(node);
      this.json(job, 'executing', { node, display_node: node });
      this.json(job, 'progress_state', { nodes: this.progressState(job) });
      const text = progress.message ?? '';
      this.options.sockets().send(job.owner, { binary: () => textFrame(node, text) });
      return;
    }
    job.executed.push(node);
    this.json(job, 'progress', { value: progress.nodes_done, max: progress.nodes_total, node });
    const files = job.pending.get(node);
    if (files !== undefined && files.length > 0) {
      job.pending.delete(node);
      job.outputs.set(node, [...(job.outputs.get(node) ?? []), ...files]);
      this.json(job, 'executed', { node, display_node: node, output: { images: files } });
    }
    this.json(job, 'progress_state', { nodes: this.progressState(job) });
  }

  /** The engine's `progress_state.nodes`: per node its state and progress (inner fields: the engine's). */
  private progressState(job: V1Job): Record<string, unknown> {
    const nodes: Record<string, unknown> = {};
    for (const step of job.record.plan.steps) {
      const done = job.executed.includes(step.nodeId);
      const running = !done && job.started.has(step.nodeId);
      nodes[step.nodeId] = {
        value: done ? 1 : 0,
        max: 1,
        state: done ? 'finished' : running ? 'running' : 'pending',
        node_id: step.nodeId,
        prompt_id: job.record.id,
        display_node_id: step.nodeId,
        parent_node_id: null,
        real_node_id: step.nodeId,
      };
    }
    return nodes;
  }

  private onPreview(job: V1Job, preview: WirePreview): void {
    this.options.sockets().send(job.owner, {
      binary: (connection) => previewFrame(preview, job.record.id, connection.previewMetadata),
    });
  }

  private onOutput(job: V1Job, output: WireOutput): void {
    if (output.hash === null) return;
    const extension =
      output.content_type === 'image/png' ? '.png' : (/\.[A-Za-z0-9]{1,8}$/.exec(output.name)?.[0] ?? '');
    const filename = contentName(output.hash, extension);
    // PreviewImage writes temporary files in the engine; SaveImage outputs.
    const type = this.classOf(job, output.node_id) === 'PreviewImage' ? 'temp' : 'output';
    this.options.state.nameFile(job.owner, filename, { assetId: output.id, type });
    const ref: FileRef = { filename, subfolder: '', type };
    const list = job.pending.get(output.node_id) ?? [];
    list.push(ref);
    job.pending.set(output.node_id, list);
  }
}
