/**
 * Turns what the shared job engine publishes (v2/events.ts: `status`, `progress`, `preview`, `output` of a job) into
 * a ComfyUI server's WebSocket messages and history for prompts submitted through its POST /prompt (ComfyUI server
 * API (observed), Following a job: the WebSocket):
 *
 * - queued: `status` to every socket;
 * - starts: `status`, then `execution_start`, `execution_cached` (`nodes: []`; every node of the prompt when an
 *   identical prompt succeeded before);
 * - a node starts: `progress_state` (the nodes started so far) and `executing {node, display_node}`; it ends:
 *   `executed {node, display_node, output: {images}}` when it wrote files, then `progress_state`;
 * - ends: `execution_success`, `execution_error {node_id, node_type, executed, exception_message, exception_type,
 *   traceback, current_inputs, current_outputs}` or `execution_interrupted {node_id, node_type, executed}`; then
 *   `status` and `executing {node: null}`;
 * - an answer from the cache: no per-node message; the output nodes' `executed` replayed with the first run's files
 *   before `execution_success`, and those files are the prompt's outputs;
 * - previews: a binary frame (type 1, or type 4 for a socket that announced `supports_preview_metadata`).
 * `execution_*`, `executing`, `executed` and previews go to the socket of the prompt's `client_id` (none without one);
 * `progress_state` to that socket, or to every socket without a `client_id`; `status` to every socket.
 */
import type { StreamEvent } from '../v2/events';
import type { JobStatus, WireOutput, WirePreview, WireProgress, WireStatusEvent } from '../v2/wire';
import { previewFrame } from '../v1/frames';
import type { FileRef } from '../v1/state';
import type { ComfySockets, ComfyMessage } from './socket';
import { ended, type ComfyJob, type ComfyState } from './state';

/** The `status` message: the queue's length. */
export function statusMessage(state: ComfyState): ComfyMessage {
  return { type: 'status', data: { status: { exec_info: { queue_remaining: state.remaining() } } } };
}

/** The free file name nearest `name` (`x_00001_.png` → `x_00002_.png`, …): the server numbers files across prompts. */
export function freeName(name: string, taken: (candidate: string) => boolean): string {
  const numbered = /^(.*_)(\d{5,})(_\.[A-Za-z0-9]+)$/.exec(name);
  let candidate = name;
  for (let n = numbered ? Number(numbered[2]) : 1; taken(candidate); n++)
    candidate = numbered
      ? `${numbered[1]}${String(n + 1).padStart(5, '0')}${numbered[3]}`
      : name.replace(/(\.[A-Za-z0-9]+)?$/, (ext) => ` (${n})${ext}`);
  return candidate;
}

/** What the translator needs. */
interface ComfyMessagesOptions {
  readonly state: ComfyState;
  readonly sockets: ComfySockets;
  readonly owner: string;
  readonly now: () => number;
}

/** The ComfyUI messages of the engine's events. */
export class ComfyMessages {
  constructor(private readonly options: ComfyMessagesOptions) {}

  /** Handles one event of job `jobId` (ignored unless the job is a ComfyUI prompt). */
  handle(jobId: string, event: StreamEvent): void {
    const job = this.options.state.jobs.get(jobId);
    if (job === undefined) return;
    switch (event.event) {
      case 'status':
        return this.onStatus(job, (event.data as WireStatusEvent).status as JobStatus);
      case 'progress':
        return this.onProgress(job, event.data as WireProgress);
      case 'preview':
        return this.onPreview(job, event.data as WirePreview);
      case 'output':
        return this.onOutput(job, event.data as WireOutput);
    }
  }

  /** Sends `status` (the queue) to every socket. */
  broadcastStatus(): void {
    this.options.sockets.send('all', { json: statusMessage(this.options.state) });
  }

  private toClient(job: ComfyJob, type: string, data: Record<string, unknown>): void {
    if (job.clientId === null) return;
    this.options.sockets.send(job.clientId, { json: { type, data } });
  }

  /** Sends an `execution_*` message to the prompt's socket and keeps it for the history. */
  private record(job: ComfyJob, type: string, data: Record<string, unknown>): void {
    const full = { prompt_id: job.record.id, ...data, timestamp: this.options.now() };
    job.messages.push([type, full]);
    this.toClient(job, type, full);
  }

  private progressState(job: ComfyJob, nodes: readonly string[]): void {
    const data = {
      prompt_id: job.record.id,
      nodes: Object.fromEntries(
        nodes.map((id) => {
          const done = job.executed.includes(id) || job.cached !== undefined;
          return [
            id,
            {
              value: done ? 1 : 0,
              max: 1,
              state: done ? 'finished' : 'running',
              node_id: id,
              prompt_id: job.record.id,
              display_node_id: id,
              parent_node_id: null,
              real_node_id: id,
            },
          ];
        }),
      ),
    };
    this.options.sockets.send(job.clientId ?? 'all', { json: { type: 'progress_state', data } });
  }

  private classOf(job: ComfyJob, nodeId: string): string | null {
    const node = job.prompt[nodeId] as { class_type?: unknown } | undefined;
    return typeof node?.class_type === 'string' ? node.class_type : null;
  }

  private onStatus(job: ComfyJob, status: JobStatus): void {
    const previous = job.lastStatus;
    job.lastStatus = status;
    if (status === 'queued') return this.broadcastStatus();
    if (status === 'running') {
      this.broadcastStatus();
      this.record(job, 'execution_start', {});
      this.record(job, 'execution_cached', { nodes: job.cached === undefined ? [] : Object.keys(job.prompt) });
      return;
    }
    if (!ended(status)) return; // canceling: nothing until it ends
    const ran = previous === 'running' || previous === 'canceling';
    if (!ran) {
      // Deleted from the queue before it ran: it leaves the queue and never enters the history.
      this.options.state.jobs.delete(job.record.id);
      return this.broadcastStatus();
    }
    if (status === 'succeeded') {
      if (job.cached !== undefined) {
        job.pending.clear();
        for (const [node, images] of job.cached) {
          job.outputs.set(node, images);
          this.toClient(job, 'executed', {
            node,
            display_node: node,
            output: { images },
            prompt_id: job.record.id,
          });
          this.progressState(job, [node]);
        }
      } else this.options.state.cache.set(job.cacheKey, new Map(job.outputs));
      this.record(job, 'execution_success', {});
    } else if (status === 'failed') {
      const error = job.record.error;
      this.record(job, 'execution_error', {
        node_id: error?.node_id ?? null,
        node_type: error?.class_type ?? null,
        executed: [...job.executed],
        exception_message: error?.message ?? 'the prompt failed',
        exception_type: error?.code === 'node_execution_error' ? 'RuntimeError' : 'Exception',
        traceback: [],
        current_inputs: {},
        current_outputs: {},
      });
    } else {
      const current = job.started.find((id) => !job.executed.includes(id)) ?? null;
      this.record(job, 'execution_interrupted', {
        node_id: current,
        node_type: current === null ? null : this.classOf(job, current),
        // Newest first, as the server lists them.
        executed: [...job.executed].reverse(),
      });
    }
    this.broadcastStatus();
    this.toClient(job, 'executing', { node: null, prompt_id: job.record.id });
  }

  private onProgress(job: ComfyJob, progress: WireProgress): void {
    const node = progress.current_node;
    if (node === null || job.cached !== undefined) return;
    if (!job.started.includes(node)) {
      job.started.push(node);
      this.progressState(job, job.started);
      this.toClient(job, 'executing', { node, display_node: node, prompt_id: job.record.id });
      return;
    }
    job.executed.push(node);
    const files = job.pending.get(node);
    if (files !== undefined) {
      job.pending.delete(node);
      job.outputs.set(node, [...(job.outputs.get(node) ?? []), ...files]);
      this.toClient(job, 'executed', {
        node,
        display_node: node,
        output: { images: files },
        prompt_id: job.record.id,
      });
    }
    this.progressState(job, job.started);
  }

  private onPreview(job: ComfyJob, preview: WirePreview): void {
    // An answer from the cache runs no node, so it previews none.
    if (job.clientId === null || job.cached !== undefined) return;
    this.options.sockets.send(job.clientId, {
      binary: (withMetadata) => previewFrame(preview, job.record.id, withMetadata),
    });
  }

  private onOutput(job: ComfyJob, output: WireOutput): void {
    // An answer from the cache writes no file: its outputs are the first run's.
    if (job.cached !== undefined) return;
    const type = this.classOf(job, output.node_id) === 'PreviewImage' ? 'temp' : 'output';
    const files = this.options.state.files;
    const filename = freeName(output.name, (name) => files.file(this.options.owner, name) !== undefined);
    files.nameFile(this.options.owner, filename, { assetId: output.id, type });
    const ref: FileRef = { filename, subfolder: '', type };
    job.pending.set(output.node_id, [...(job.pending.get(output.node_id) ?? []), ref]);
  }
}
