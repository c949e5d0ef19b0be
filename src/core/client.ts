/**
 * The idiomatic layer over the low-level operations: submit-and-watch, downloading a job's outputs. The CLI and
 * the extension both drive jobs through {@link ComfyClient}; neither speaks HTTP itself.
 */
import * as path from 'node:path';
import { systemClock, type Clock } from './clock';
import { downloadToFile, freePath, safeFileName, type DownloadOptions, type DownloadResult } from './download';
import { Transport, type TransportOptions } from './http';
import { JobsApi, type JobSnapshot, type SubmitOptions, type Submission } from './jobs';
import type { JobOutput } from './schemas';
import { surfaceFromBaseUrl, type Surface } from './surface';
import { watchJob, type WatchOptions, type WatchUpdate } from './watch';

/** How to build a client: the transport's options plus an injectable clock. */
export interface ComfyClientOptions extends TransportOptions {
  clock?: Clock;
}

/** One downloaded output. */
export interface DownloadedOutput extends DownloadResult {
  output: JobOutput;
}

/** Options of {@link ComfyClient.run}. */
export interface RunOptions extends Omit<SubmitOptions, 'signal'> {
  /** Aborts the submission or the wait (not the job: to cancel the job, call `jobs.cancel`). */
  signal?: AbortSignal;
  /** Called once the job exists, with the submission (its id and Idempotency-Key). */
  onSubmitted?: (submission: Submission) => void;
  onUpdate?: (update: WatchUpdate) => void;
  /** Where to download the outputs of a succeeded job; none: not downloaded. */
  outputDir?: string;
  /** Watch options (stream on/off, cadence). */
  watch?: Omit<WatchOptions, 'signal' | 'onUpdate' | 'clock'>;
  onDownload?: DownloadOptions['onProgress'];
}

/** The outcome of a run: the submission, the final job (from GET) and the files written. */
export interface RunResult {
  submission: Submission;
  final: JobSnapshot;
  files: DownloadedOutput[];
}

/** A client of one server (one base URL and API key). Close it when done. */
export class ComfyClient {
  readonly http: Transport;
  readonly jobs: JobsApi;
  readonly surface: Surface;
  readonly clock: Clock;

  /** @throws InputError `bad_base_url`. */
  constructor(options: ComfyClientOptions) {
    this.surface = surfaceFromBaseUrl(options.baseUrl);
    this.http = new Transport(options);
    this.jobs = new JobsApi(this.http);
    this.clock = options.clock ?? systemClock;
  }

  /** Watches a job to its terminal status; see {@link watchJob}. */
  watch(job: JobSnapshot | string, options: WatchOptions = {}): Promise<JobSnapshot> {
    return watchJob(this.jobs, job, { clock: this.clock, ...options });
  }

  /**
   * Submits a workflow, watches it to the end and, when it succeeded and `outputDir` is set, downloads every
   * output there (free names: nothing is overwritten).
   * @throws as {@link JobsApi.submit}, {@link watchJob} and {@link downloadToFile}.
   */
  async run(workflow: unknown, options: RunOptions = {}): Promise<RunResult> {
    const submission = await this.jobs.submit(workflow, options);
    options.onSubmitted?.(submission);
    const final = await this.watch(submission, { ...options.watch, signal: options.signal, onUpdate: options.onUpdate });
    const files =
      final.job.status === 'succeeded' && options.outputDir
        ? await this.downloadOutputs(final, options.outputDir, { signal: options.signal, onProgress: options.onDownload })
        : [];
    return { submission, final, files };
  }

  /** Downloads every output of a job into `dir`, each under its own name made safe and free. */
  async downloadOutputs(snapshot: JobSnapshot, dir: string, options: Omit<DownloadOptions, 'overwrite'> = {}): Promise<DownloadedOutput[]> {
    const files: DownloadedOutput[] = [];
    const taken = new Set<string>();
    for (const output of snapshot.job.outputs) {
      const fallback = `${output.id}${output.content_type === 'image/png' ? '.png' : ''}`;
      const file = await freePath(path.resolve(dir), safeFileName(output.name, fallback), taken);
      taken.add(file);
      const result = await downloadToFile(this.http, this.jobs.outputUrl(snapshot, output), file, options);
      files.push({ ...result, output });
    }
    return files;
  }

  /** Downloads an asset's content (`GET /api/v2/assets/{id}/content`) to `file`; refuses to overwrite unless asked. */
  downloadAsset(assetId: string, file: string, options: DownloadOptions = {}): Promise<DownloadResult> {
    return downloadToFile(this.http, this.http.url(`/api/v2/assets/${encodeURIComponent(assetId)}/content`), file, options);
  }

  /** Releases connections. */
  close(): Promise<void> {
    return this.http.close();
  }
}
