/**
 * Runs jobs: queues them (FIFO, bounded concurrency), executes each with the engine, turns what the engine
 * reports into job state (progress, previews, committed outputs) and ends each run in the state the state
 * machine allows; carries out cancel (Job and Asset API v2, States and transitions; public sources: cancel is
 * idempotent, a queued job is dequeued and ends canceled).
 * Per node: a progress snapshot when it starts (current_node = that node, so a long node shows what runs)
 * and when it ends; a preview after an image-producing node; one committed output per image saved. A node the hold
 * plan names (holds.ts) waits after its start snapshot until a test releases it.
 */
import type { AssetStore } from './assets';
import type { NodeHolds } from '../holds';
import { executePlan, NodeExecutionError, type PlanStep } from '../engine/engine';
import { thumbnail, type RgbImage } from '../engine/image';
import type { JobRecord, JobStore } from './jobs';
import type { NodeContext } from '../engine/nodes';
import { asciiJson, encodePng, pngStream } from '../engine/png';
import { Scheduler } from '../scheduler';
import type { WireProgress } from './wire';

/** Longest side of a preview image, in pixels. */
const PREVIEW_BOX = 128;

/** What the runner needs around it. */
interface RunnerOptions {
  readonly jobs: JobStore;
  readonly assets: AssetStore;
  /** Extra time per executed node, in ms; cancel interrupts it. */
  readonly nodeDelayMs: number;
  /** Jobs running at once (≥ 1). */
  readonly concurrency: number;
  /** Where a node that the hold plan names waits at its start until released (holds.ts); none: nodes never hold. */
  readonly holds?: NodeHolds;
}

function progressOf(step: PlanStep, done: number, total: number, message: string): WireProgress {
  return {
    value: total === 0 ? 1 : done / total,
    nodes_done: done,
    nodes_total: total,
    current_node: step.nodeId,
    current_node_class: step.classType,
    step: null,
    steps: null,
    message,
  };
}

/** Queues, runs and cancels jobs. */
export class JobRunner {
  private readonly scheduler: Scheduler<JobRecord>;
  private readonly active = new Set<JobRecord>();
  /** Output file name counters per job and prefix (the engine numbers files per prefix). */
  private readonly counters = new WeakMap<JobRecord, Map<string, number>>();
  private closing = false;

  constructor(private readonly options: RunnerOptions) {
    this.scheduler = new Scheduler<JobRecord>(options.concurrency, {
      start: (job) => this.run(job),
      // queue_position is 0-based: 0 = the next job to start.
      queueChanged: (queue) => queue.forEach((job, position) => options.jobs.setQueuePosition(job, position)),
    });
  }

  /** Queues a new job (status `queued`). */
  submit(job: JobRecord): void {
    this.scheduler.enqueue(job);
  }

  /**
   * POST /api/v2/jobs/{id}/cancel: a queued job is dequeued and ends `canceled` at once; a running one goes
   * `canceling` and its run is interrupted (it ends `canceled` within a few event-loop turns); a canceling or
   * terminal job is left unchanged (cancel is idempotent).
   */
  cancel(job: JobRecord): void {
    if (job.status === 'queued') {
      this.scheduler.remove(job);
      this.options.jobs.transition(job, 'canceled');
    } else if (job.status === 'running') {
      this.options.jobs.transition(job, 'canceling');
      job.abort?.abort();
    }
  }

  /** A job left retention: take it out of the queue, interrupt its run. */
  drop(job: JobRecord): void {
    this.scheduler.remove(job);
    job.abort?.abort();
  }

  /** Interrupts every run and stops the queue; resolves when the runs have settled. */
  async close(): Promise<void> {
    this.closing = true;
    for (const job of this.active) job.abort?.abort();
    await this.scheduler.close();
  }

  private async run(job: JobRecord): Promise<void> {
    // A job dropped or canceled after being started by the scheduler is not run.
    if (job.status !== 'queued' || this.closing) return;
    const controller = new AbortController();
    job.abort = controller;
    this.active.add(job);
    this.options.jobs.transition(job, 'running');
    const { jobs } = this.options;
    let failure: unknown;
    try {
      await executePlan(job.plan, {
        signal: controller.signal,
        nodeDelayMs: this.options.nodeDelayMs,
        onNodeStart: (step, index, total) => {
          jobs.log(job, 'info', `executing node ${step.nodeId} (${step.classType}), ${index + 1} of ${total}`);
          jobs.setProgress(
            job,
            progressOf(step, index, total, `running ${step.classType} (node ${step.nodeId}), ${index + 1} of ${total}`),
          );
        },
        beforeNodeRuns: (step, index, total) =>
          this.options.holds?.wait(job.id, step, index, total, controller.signal) ?? Promise.resolve(),
        onNodeDone: (step, index, total) =>
          jobs.setProgress(
            job,
            progressOf(
              step,
              index + 1,
              total,
              `finished ${step.classType} (node ${step.nodeId}), ${index + 1} of ${total}`,
            ),
          ),
        onPreview: (step, image) => jobs.setPreview(job, this.preview(step, image)),
        context: (step) => this.nodeContext(job, step, controller.signal),
      });
    } catch (e) {
      failure = e;
    } finally {
      job.abort = null;
      job.extraData = null;
      this.active.delete(job);
    }
    if (this.closing) return;
    this.finish(job, failure);
  }

  /** Ends a run in the state the state machine allows from where the job is now. */
  private finish(job: JobRecord, failure: unknown): void {
    const { jobs } = this.options;
    if (job.status === 'canceling') {
      jobs.transition(job, 'canceled');
    } else if (job.status === 'running' && failure === undefined) {
      jobs.transition(job, 'succeeded');
    } else if (job.status === 'running') {
      jobs.log(job, 'error', failure instanceof Error ? failure.message : String(failure));
      job.error =
        failure instanceof NodeExecutionError
          ? {
              code: 'node_execution_error',
              message: failure.message,
              node_id: failure.nodeId,
              class_type: failure.classType,
              traceback: null,
            }
          : {
              code: 'execution_error',
              message: 'the emulator failed while executing the workflow',
              node_id: null,
              class_type: null,
              traceback: null,
            };
      jobs.transition(job, 'failed');
    }
    // Any other status: the job left retention during the run (it is already `expired` or gone).
  }

  private preview(step: PlanStep, image: RgbImage): { node_id: string; content_type: string; data_base64: string } {
    return {
      node_id: step.nodeId,
      content_type: 'image/png',
      data_base64: encodePng(thumbnail(image, PREVIEW_BOX)).toString('base64'),
    };
  }

  private nodeContext(job: JobRecord, step: PlanStep, signal: AbortSignal): NodeContext {
    const { assets, jobs } = this.options;
    const counters = this.counters.get(job) ?? new Map<string, number>();
    this.counters.set(job, counters);
    // ComfyUI's SaveImage (and PreviewImage) write the graph as run into every PNG, as a `prompt` tEXt chunk; the
    // `workflow` chunk (and any other) only from a submission's extra_pnginfo, which only the ComfyUI routes take
    // (job.pngText): the v2 API has none. Written once per node.
    let prompt: string | undefined;
    return {
      nodeId: step.nodeId,
      signal,
      nextFileName: (prefix) => {
        const n = (counters.get(prefix) ?? 0) + 1;
        counters.set(prefix, n);
        return `${prefix}_${String(n).padStart(5, '0')}_.png`;
      },
      commitImage: async (image, name) => {
        // Streamed into the blob store while hashed: the output gets its blake3 hash and is deduplicated.
        prompt ??= asciiJson(job.workflow);
        const staged = await assets.ingest(pngStream(image, { ...job.pngText, prompt }), signal);
        if (signal.aborted) {
          // Interrupted between the write and the commit: the bytes belong to no output.
          await assets.discard(staged);
          signal.throwIfAborted();
        }
        const { record } = assets.store(staged, job.owner, {
          contentType: 'image/png',
          name,
          expiresAt: job.expiresAt,
          jobId: job.id,
          nodeId: step.nodeId,
        });
        jobs.addOutput(job, record);
      },
      resolveAsset: (id) => {
        const asset = assets.get(job.owner, id);
        return asset === undefined ? undefined : { file: asset.file, contentType: asset.contentType };
      },
    };
  }
}
