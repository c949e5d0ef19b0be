/**
 * What an engine job's socket says (shared by v1 and a ComfyUI server's native API), as the job model's updates (Cloud API v1 (deprecated), "Events"): the {@link Tracker}
 * of one prompt follows its messages (filtered by `prompt_id`; preview and text frames are ours only while the last
 * message that named a prompt named ours), reports its status, progress, outputs and previews, and keeps what it learnt
 * for the final answer. It maps; the rules over the job's state (progress never backwards) are the job service's.
 */
import type { JobUpdate } from '../jobs/backend';
import { MAX_CACHED_NODES, type JobOutput, type Progress } from '../jobs/model';
import { clampFraction } from '../jobs/progress';
import { isPlainObject, type ApiWorkflow } from '../util/workflow';
import { failureOf, filesOfNodeOutput, type NodeFile, type V1Failure } from './files';
import type { EngineMessage } from './socket';

/** What turns a node output's files into the job model's outputs (each API knows its `/view` URL). */
export interface OutputSource {
  /** The final files among `files`, as outputs of the model. */
  jobOutputs(files: NodeFile[]): JobOutput[];
}

/** Follows the messages of one prompt and reports them as the model's updates. */
export class Tracker {
  started = false;
  /** When execution began: the `execution_start` event's `timestamp` (ms since the epoch), ISO 8601. */
  startedAt: string | undefined;
  failure: V1Failure | undefined;
  readonly outputs = new Map<string, JobOutput>();
  progress: Progress | null = null;
  /** The prompt the last message naming one was about, on the current connection. */
  private lastPrompt: string | undefined;
  private status: string | undefined;
  private readonly done = new Set<string>();
  /** The nodes answered from the engine's cache (`execution_cached`), bounded. */
  private readonly cached = new Set<string>();
  private currentNode: string | undefined;
  private step: number | null = null;
  private steps: number | null = null;
  private message: string | null = null;
  private progressKey = '';

  constructor(
    private readonly promptId: string,
    private readonly client: OutputSource,
    private readonly workflow: ApiWorkflow | undefined,
    private readonly emit: (update: JobUpdate) => void,
    private readonly wake: () => void,
  ) {}

  /** A new connection: which prompt is executing is not known on it yet. */
  newConnection(): void {
    this.lastPrompt = undefined;
  }

  reportStatus(status: string): void {
    if (status === this.status) return;
    this.status = status;
    this.emit({ type: 'status', status, queuePosition: null });
  }

  reportOutput(output: JobOutput): void {
    if (this.outputs.has(output.id)) return;
    this.outputs.set(output.id, output);
    this.emit({ type: 'output', output });
  }

  private running(): void {
    this.started = true;
    if (this.status === undefined || this.status === 'queued') this.reportStatus('running');
  }

  /**
   * The progress from what is known: nodes done of the workflow's nodes, the current node's steps, its text; without
   * the workflow's node count, the value is the current node's own steps. Whether it is behind the job's is the job
   * service's rule, applied once to the job's state (core/jobs state.ts).
   */
  private reportProgress(): void {
    const total = this.workflow ? Object.keys(this.workflow).length : null;
    const fraction = this.steps ? (clampFraction((this.step ?? 0) / this.steps) ?? 0) : 0;
    const value: number | null = total
      ? clampFraction((this.done.size + fraction) / total)
      : this.steps
        ? fraction
        : null;
    const node = this.currentNode ?? null;
    const nodeClass = node && this.workflow?.[node]?.class_type ? this.workflow[node].class_type : null;
    const progress: Progress = {
      value,
      nodesDone: this.done.size,
      nodesTotal: total,
      currentNode: node,
      currentNodeClass: nodeClass,
      step: this.step,
      steps: this.steps,
      message: this.message ?? (nodeClass && this.steps ? `${nodeClass} ${this.step ?? 0}/${this.steps}` : null),
      ...(this.cached.size > 0 ? { cachedNodes: [...this.cached] } : {}),
    };
    const key = JSON.stringify(progress);
    if (key === this.progressKey) return;
    this.progressKey = key;
    this.progress = progress;
    this.emit({ type: 'progress', progress });
  }

  /** One message of the socket (Cloud API v1 (deprecated), Events). Never throws on odd data. */
  handle(m: EngineMessage): void {
    if (m.kind === 'json') {
      const pid = m.data.prompt_id;
      if (typeof pid === 'string' && pid) this.lastPrompt = pid;
      if (pid !== this.promptId) return; // another job's, or no job's (`status`, `notification`)
      const d = m.data;
      switch (m.type) {
        case 'execution_start':
          if (typeof d.timestamp === 'number' && Number.isFinite(d.timestamp) && d.timestamp > 0)
            this.startedAt ??= new Date(d.timestamp).toISOString();
          this.running();
          return;
        case 'executing': {
          if (d.node === null || d.node === undefined || d.node === '') {
            this.wake(); // "when node is empty the execution is complete": ask the status endpoint now
            return;
          }
          this.running();
          if (this.currentNode !== undefined && this.currentNode !== String(d.node)) this.done.add(this.currentNode);
          this.currentNode = String(d.node);
          this.step = null;
          this.steps = null;
          this.message = null;
          this.reportProgress();
          return;
        }
        case 'progress': {
          this.running();
          if (typeof d.value === 'number' && Number.isFinite(d.value)) this.step = d.value;
          if (typeof d.max === 'number' && Number.isFinite(d.max) && d.max > 0) this.steps = d.max;
          if (typeof d.node === 'string' || typeof d.node === 'number') this.currentNode = String(d.node);
          this.reportProgress();
          return;
        }
        case 'progress_state': {
          // Inner fields "not shown": a node whose `state` is `finished` counts as done (the engine's vocabulary).
          if (isPlainObject(d.nodes)) {
            for (const [id, n] of Object.entries(d.nodes))
              if (isPlainObject(n) && n.state === 'finished') this.done.add(id);
            this.reportProgress();
          }
          return;
        }
        case 'executed': {
          const node = typeof d.node === 'string' || typeof d.node === 'number' ? String(d.node) : '';
          if (node) this.done.add(node);
          for (const output of this.client.jobOutputs(filesOfNodeOutput(node, d.output))) this.reportOutput(output);
          this.reportProgress();
          return;
        }
        case 'execution_cached': {
          if (Array.isArray(d.nodes))
            for (const n of d.nodes)
              if (typeof n === 'string' || typeof n === 'number') {
                this.done.add(String(n));
                if (this.cached.size < MAX_CACHED_NODES) this.cached.add(String(n));
              }
          this.reportProgress();
          return;
        }
        case 'execution_error':
          this.failure = failureOf(d);
          this.wake();
          return;
        case 'execution_success':
        case 'execution_interrupted':
          this.wake();
          return;
        default:
          return; // unknown types are ignored
      }
    }
    if (m.kind === 'preview') {
      const owner = m.metadata?.prompt_id ?? this.lastPrompt;
      if (owner !== this.promptId) return;
      const node = m.metadata?.display_node_id ?? m.metadata?.node_id ?? this.currentNode ?? null;
      this.emit({
        type: 'preview',
        preview: { nodeId: node, contentType: m.contentType, dataBase64: m.image.toString('base64') },
      });
      return;
    }
    if (m.kind === 'text') {
      if (this.lastPrompt !== this.promptId) return;
      this.currentNode = m.nodeId || this.currentNode;
      this.message = m.text.slice(0, 500);
      this.reportProgress();
    }
    // `unknown` frame types: ignored.
  }
}
