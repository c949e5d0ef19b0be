/**
 * The one owner of a remembered job's end (vscode-free: the extension injects where outputs go and how an end is
 * told). Whoever saw the job end — this process's submission, a watch started at start-up, or the first read at
 * start-up of a job that ended while nobody watched — hands it to {@link JobEnds.ended}, which, once per job:
 * 1. downloads the outputs of a succeeded job into its output folder, skipping each one already complete there
 *    ({@link savedOutputPath}: never a second copy);
 * 2. writes the record's `lastStatus` and `expiresAt` (after the download, so a process that dies while downloading
 *    leaves the record not terminal and the next start-up downloads again);
 * 3. tells the end once (the extension's notification): one at a time, or ONE summary for the jobs found ended by
 *    {@link JobEnds.resume} at start-up.
 * {@link JobEnds.resume} (start-up, a connection back or changed) reads again every remembered job of the current
 * server not known to be terminal ({@link recordsToResume}), and follows one still running to its end.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { AbortError, describeError, isNotFound } from '../http/errors';
import type { JobRecord, StateStore } from '../state/stateStore';
import type { JobBackend } from './backend';
import { JobLostError, type ClientLease, type Connection, type JobFollow, type ServiceLog } from './jobService';
import { isTerminalStatus, type Job, type JobOutput } from './model';
import { isSavedOutput, outputFileName } from './outputFiles';

/**
 * The records {@link JobEnds.resume} reads again: those of server `baseUrl` with a job id whose last status is not
 * terminal (unknown, queued, running, canceling, or any other word), newest first. A record already terminal was
 * handled when it ended (a terminal status never changes: Job and Asset API v2, States and transitions). A variation
 * of a batch (`batchId`) is left to the batch's runner (batch/run.ts): its outputs go to the batch's folders and its
 * end is told once for the whole batch, never as a single job's.
 */
export function recordsToResume(records: readonly JobRecord[], baseUrl: string): JobRecord[] {
  return records
    .filter((r) => r.baseUrl === baseUrl && r.jobId !== undefined && r.batchId === undefined && !(r.lastStatus !== undefined && isTerminalStatus(r.lastStatus)))
    .sort((a, b) => b.submittedAt.localeCompare(a.submittedAt));
}

/**
 * The path of `output` complete in folder `dir` ({@link outputFileName}, {@link isSavedOutput}), with its size on
 * disk in bytes; undefined when it is not there (or the folder cannot be read).
 */
export async function savedOutputPath(output: JobOutput, dir: string): Promise<{ path: string; bytes: number } | undefined> {
  const file = path.join(dir, outputFileName(output));
  const stat = await fs.stat(file).catch(() => undefined);
  return stat?.isFile() && isSavedOutput(output, stat.size) ? { path: file, bytes: stat.size } : undefined;
}

/** An output of a job and its complete file on this machine (absolute path). */
export interface SavedOutputFile {
  output: JobOutput;
  path: string;
}

/**
 * Downloads into `dir` the outputs of `job` not already complete there ({@link savedOutputPath}), so a download cut
 * short (a window closed, a process killed) is finished later without a second copy of what was saved.
 * @returns every output with its file, in the job's order (found complete or downloaded now).
 * @throws as {@link JobBackend.downloadOutputs} (the files saved before the error stay).
 */
export async function downloadMissingOutputs(backend: JobBackend, job: Job, dir: string, signal?: AbortSignal): Promise<SavedOutputFile[]> {
  const found = await Promise.all(job.outputs.map((o) => savedOutputPath(o, dir)));
  const missing = job.outputs.filter((_, i) => found[i] === undefined);
  const downloaded = missing.length === 0 ? [] : await backend.downloadOutputs({ ...job, outputs: missing }, dir, { signal });
  const byId = new Map(downloaded.map((s) => [s.output.id, s.path]));
  return job.outputs.flatMap((output, i) => {
    const file = found[i]?.path ?? byId.get(output.id);
    return file === undefined ? [] : [{ output, path: file }];
  });
}

/** A job's end as {@link JobEnds} handled it. */
export interface HandledEnd {
  baseUrl: string;
  /** The final job, from the server. */
  job: Job;
  /** The job's record, when this machine remembers it. */
  record: JobRecord | undefined;
  /** The output folder (a succeeded job with outputs only). */
  dir: string | undefined;
  /** Absolute paths of the outputs on disk, in the job's order (downloaded now or found complete). */
  files: string[];
  /** Set when a download failed (the files saved before it are listed). */
  downloadError?: unknown;
}

/** What {@link JobEnds} needs: the job service's leases and follows, the store, and the extension's two hooks. */
export interface JobEndsOptions<C extends Connection = Connection> {
  jobs: {
    lease(): Promise<ClientLease<C>>;
    follow(jobId: string, options?: { signal?: AbortSignal }): JobFollow;
  };
  store: Pick<StateStore, 'list' | 'update'>;
  log: ServiceLog;
  /**
   * The output folder of a job (created), from its record (its workflow file, if any).
   * @throws as the file system.
   */
  outputDir(jobId: string, record: JobRecord | undefined): Promise<string>;
  /**
   * Tells job ends: one job at a time, or all the jobs {@link JobEnds.resume} found ended at once (the extension shows
   * one summary). Called once per job, never for a job of another client than {@link JobEndsOptions.client}.
   */
  tell(ends: HandledEnd[]): void;
  /** The client whose records' ends are downloaded and told (the CLI downloads its own); default `vscode`. */
  client?: JobRecord['client'];
}

/** See the module comment. Dispose it to stop following (what was downloaded stays). */
export class JobEnds<C extends Connection = Connection> {
  private readonly handled = new Map<string, Promise<HandledEnd>>();
  private readonly following = new Map<string, JobFollow>();
  private readonly lifetime = new AbortController();
  private resuming: Promise<HandledEnd[]> | undefined;

  constructor(private readonly options: JobEndsOptions<C>) {}

  /**
   * Handles the end of job `job` of server `baseUrl` (see the module comment), once per job: a second call (the same
   * job seen ended by a submission and by a start-up watch) gets the first call's result and tells nothing.
   * `tell: false` leaves the telling to the caller (the start-up summary). A job that is not terminal is not handled.
   * `backend`: the connection to download with (default: a lease of the job service). Never rejects: a failed
   * download is logged and given as `downloadError`.
   */
  ended(baseUrl: string, job: Job, options: { record?: JobRecord; backend?: JobBackend; tell?: boolean } = {}): Promise<HandledEnd> {
    const key = `${baseUrl} ${job.id}`;
    const known = this.handled.get(key);
    if (known) return known;
    const done = this.handle(baseUrl, job, options.record, options.backend).then((end) => {
      // Not terminal (a watch that gave up) or not downloaded: told as it stands (not for a failed download: its
      // caller says why), and handled again when seen again.
      if (!isTerminalStatus(job.status) || end.downloadError !== undefined) this.handled.delete(key);
      if (options.tell !== false && end.downloadError === undefined && this.tells(end)) this.options.tell([end]);
      return end;
    });
    this.handled.set(key, done);
    return done;
  }

  /**
   * Reads again every remembered job of the current server not known to be terminal ({@link recordsToResume}): one
   * found ended is handled, and all those are told at once; one still running is followed, and handled when it
   * ends. One run at a time (a call during a run shares it). Never rejects (failures are logged).
   * @returns the ends handled by this run (not those of the jobs it follows).
   */
  resume(): Promise<HandledEnd[]> {
    this.resuming ??= this.resumeOnce()
      .catch((err: unknown) => {
        if (!AbortError.is(err) && !this.lifetime.signal.aborted) this.options.log.warn('job-ends', `reading remembered jobs failed: ${describeError(err)}`);
        return [];
      })
      .finally(() => (this.resuming = undefined));
    return this.resuming;
  }

  /** The jobs followed to their end now (tests read it). */
  get followed(): string[] {
    return [...this.following.keys()];
  }

  /** Stops following; a download under way is aborted with the job service. Idempotent. */
  dispose(): void {
    this.lifetime.abort();
    for (const follow of this.following.values()) follow.dispose();
    this.following.clear();
  }

  private tells(end: HandledEnd): boolean {
    return (end.record?.client ?? this.options.client ?? 'vscode') === (this.options.client ?? 'vscode');
  }

  private async resumeOnce(): Promise<HandledEnd[]> {
    const lease = await this.options.jobs.lease();
    try {
      const { backend } = lease;
      const baseUrl = backend.baseUrl;
      const records = recordsToResume(await this.options.store.list(), baseUrl);
      const ended: HandledEnd[] = [];
      // One at a time: a start-up is cheap, and a long list does not flood the server.
      for (const record of records) {
        if (this.lifetime.signal.aborted) break;
        const key = `${baseUrl} ${record.jobId!}`;
        if (this.handled.has(key) || this.following.has(key)) continue;
        let job: Job;
        try {
          job = (await backend.get(record.jobId!, AbortSignal.any([lease.signal, this.lifetime.signal]))).job;
        } catch (err) {
          if (AbortError.is(err)) throw err;
          // A 404: the job service's watch makes the job lost (its state published, its records written), the one
          // place that does (jobService.ts).
          if (isNotFound(err)) this.follow(baseUrl, record);
          else this.options.log.warn('job-ends', `job ${record.jobId!}: cannot be read again: ${describeError(err)}`);
          continue;
        }
        if (isTerminalStatus(job.status)) {
          ended.push(await this.ended(baseUrl, job, { record, backend, tell: false }));
        } else {
          if (job.status !== record.lastStatus) await this.record(record, job);
          this.follow(baseUrl, record);
        }
      }
      const told = ended.filter((e) => e.downloadError === undefined && this.tells(e));
      if (told.length > 0) this.options.tell(told);
      return ended;
    } finally {
      lease.release();
    }
  }

  /** Follows a remembered job still running through the job service's one watch; its end is handled. */
  private follow(baseUrl: string, record: JobRecord): void {
    const key = `${baseUrl} ${record.jobId!}`;
    const follow = this.options.jobs.follow(record.jobId!, { signal: this.lifetime.signal });
    this.following.set(key, follow);
    follow.done.then(
      (final) => {
        this.following.delete(key);
        void this.ended(baseUrl, final.job, { record });
      },
      (err: unknown) => {
        this.following.delete(key);
        if (JobLostError.is(err)) this.options.log.info('job-ends', `job ${record.jobId!}: lost (the server no longer knows it)`);
        else if (!AbortError.is(err)) this.options.log.warn('job-ends', `job ${record.jobId!}: the watch ended without its end: ${describeError(err)}`);
      },
    );
  }

  private async handle(baseUrl: string, job: Job, given: JobRecord | undefined, backend: JobBackend | undefined): Promise<HandledEnd> {
    const record = given ?? (await this.recordOf(baseUrl, job.id));
    const end: HandledEnd = { baseUrl, job, record, dir: undefined, files: [] };
    if (!isTerminalStatus(job.status)) return end;
    if (job.status === 'succeeded' && job.outputs.length > 0 && this.tells(end)) {
      try {
        end.dir = await this.options.outputDir(job.id, record);
        end.files = await this.download(job, end.dir, backend);
        this.options.log.info('job-ends', `job ${job.id}: ${end.files.length} output(s) in ${end.dir}`);
      } catch (err) {
        end.downloadError = err;
        if (!AbortError.is(err)) this.options.log.warn('job-ends', `job ${job.id}: downloading its outputs failed: ${describeError(err)}`);
        // Not terminal in the record: the next start-up tries again.
        return end;
      }
    }
    if (record) await this.record(record, job);
    return end;
  }

  /** The outputs not complete in `dir` downloaded there; returns every output's path, in the job's order. */
  private async download(job: Job, dir: string, backend: JobBackend | undefined): Promise<string[]> {
    if (backend) return (await downloadMissingOutputs(backend, job, dir, this.lifetime.signal)).map((s) => s.path);
    const lease = await this.options.jobs.lease();
    try {
      return (await downloadMissingOutputs(lease.backend, job, dir, AbortSignal.any([lease.signal, this.lifetime.signal]))).map((s) => s.path);
    } finally {
      lease.release();
    }
  }

  private async recordOf(baseUrl: string, jobId: string): Promise<JobRecord | undefined> {
    const records = await this.options.store.list().catch(() => []);
    return records.find((r) => r.baseUrl === baseUrl && r.jobId === jobId);
  }

  private async record(record: JobRecord, job: Job): Promise<void> {
    await this.options.store.update(record.idempotencyKey, { lastStatus: job.status, expiresAt: job.expiresAt ?? record.expiresAt }).then(
      () => undefined,
      (err: unknown) => this.options.log.warn('job-ends', `job ${job.id}: the record could not be updated: ${describeError(err)}`),
    );
  }
}
