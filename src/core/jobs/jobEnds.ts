/**
 * The one owner of a remembered job's end (vscode-free: the extension injects where outputs go and how an end is
 * told). Whoever saw the job end — this process's submission, a watch started at start-up, or the first read at
 * start-up of a job that ended while nobody watched — hands it to {@link JobEnds.ended}, which, once per job and once
 * per machine:
 * 1. claims the end in the state folder (state/endClaims.ts): the first process to claim it handles it; another
 *    process that sees the same end (a second window, a second start-up) waits while the owner runs, then reads the
 *    files it saved and tells nothing; a claim whose owner died is taken over;
 * 2. downloads the outputs of a succeeded job into its output folder, skipping each one already complete there
 *    (savedOutputs.ts `savedOutputPath`: proven by its proof, never guessed by name and size: never a second
 *    copy, never another job's file); the folder is made only then (a failed job, or one without outputs, gets none);
 * 3. writes the record's `lastStatus` and `expiresAt` (after the download, so a process that dies while downloading
 *    leaves the record not terminal and the next start-up downloads again);
 * 4. marks the claim told (with the files saved) and tells the end once (the extension's notification): one at a
 *    time, or ONE summary for the jobs found ended by {@link JobEnds.resume} at start-up.
 * {@link JobEnds.resume} (start-up, a connection back or changed) reads again every remembered job of the current
 * server not known to be terminal ({@link recordsToResume}), and follows one still running to its end.
 */
import { promises as fs } from 'node:fs';
import { AbortError, describeError, isNotFound } from '../http/errors';
import { EndClaims, type EndClaim, type EndClaimsOptions } from '../state/endClaims';
import type { JobRecord, StateStore } from '../state/stateStore';
import type { JobBackend } from './backend';
import { JobLostError, type ClientLease, type Connection, type JobFollow, type ServiceLog } from './jobService';
import { isTerminalStatus, type Job } from './model';
import { downloadMissingOutputs } from './savedOutputs';

export { downloadMissingOutputs, savedOutputPath, type SavedOutputFile } from './savedOutputs';

/**
 * The records {@link JobEnds.resume} reads again: those of server `baseUrl` with a job id whose last status is not
 * terminal (unknown, queued, running, canceling, or any other word), newest first. A record already terminal was
 * handled when it ended (a terminal status never changes: Job and Asset API v2, States and transitions). A variation
 * of a batch (`batchId`) is left to the batch's runner (batch/run.ts): its outputs go to the batch's folders and its
 * end is told once for the whole batch, never as a single job's.
 */
export function recordsToResume(records: readonly JobRecord[], baseUrl: string): JobRecord[] {
  return records
    .filter(
      (r) =>
        r.baseUrl === baseUrl &&
        r.jobId !== undefined &&
        r.batchId === undefined &&
        !(r.lastStatus !== undefined && isTerminalStatus(r.lastStatus)),
    )
    .sort((a, b) => b.submittedAt.localeCompare(a.submittedAt));
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
  /**
   * Set when the end was not handled: a download failed (the files saved before it are listed), or the end could not
   * be claimed in the state folder. The record stays not terminal; the end is handled again when seen again.
   */
  downloadError?: unknown;
  /**
   * True when another process of this machine claimed and told this end (state/endClaims.ts): `files` are those it
   * saved; nothing was downloaded or told here.
   */
  toldElsewhere?: boolean;
}

/** What {@link JobEnds} needs: the job service's leases and follows, the store, and the extension's two hooks. */
export interface JobEndsOptions<C extends Connection = Connection> {
  jobs: {
    lease(): Promise<ClientLease<C>>;
    follow(jobId: string, options?: { signal?: AbortSignal }): JobFollow;
  };
  /** The job records, and the state folder whose end claims say which process handles an end. */
  store: Pick<StateStore, 'list' | 'recordStatus' | 'dir' | 'withStoreLock'>;
  log: ServiceLog;
  /**
   * The output folder of a job (created), from its record (its workflow file, if any). Asked only when there is
   * something to write into it (a succeeded job with outputs): a failed job leaves no empty folder.
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
  /** Options of the end claims (tests inject the clock and the poll interval). */
  claims?: EndClaimsOptions;
}

/** See the module comment. Dispose it to stop following (what was downloaded stays). */
export class JobEnds<C extends Connection = Connection> {
  private readonly handled = new Map<string, Promise<HandledEnd>>();
  private readonly following = new Map<string, JobFollow>();
  private readonly lifetime = new AbortController();
  /** The run under way, and the one asked for during it ({@link resume}). */
  private resuming: Promise<HandledEnd[]> | undefined;
  private again: Promise<HandledEnd[]> | undefined;
  private readonly claims: EndClaims;

  constructor(private readonly options: JobEndsOptions<C>) {
    this.claims = new EndClaims(options.store, options.claims);
  }

  /**
   * Handles the end of job `job` of server `baseUrl` (see the module comment), once per job: a second call (the same
   * job seen ended by a submission and by a start-up watch) gets the first call's result and tells nothing.
   * `tell: false` leaves the telling to the caller (the start-up summary). A job that is not terminal is not handled.
   * `backend`: the connection to download with (default: a lease of the job service). Never rejects: a failed
   * download is logged and given as `downloadError`.
   */
  ended(
    baseUrl: string,
    job: Job,
    options: { record?: JobRecord; backend?: JobBackend; tell?: boolean } = {},
  ): Promise<HandledEnd> {
    const key = `${baseUrl} ${job.id}`;
    const known = this.handled.get(key);
    if (known) return known;
    const done = this.handle(baseUrl, job, options.record, options.backend).then((end) => {
      // Not terminal (a watch that gave up) or not downloaded: told as it stands (not for a failed download: its
      // caller says why), and handled again when seen again.
      if (!isTerminalStatus(job.status) || end.downloadError !== undefined) this.handled.delete(key);
      if (options.tell !== false && this.toldHere(end)) this.options.tell([end]);
      return end;
    });
    this.handled.set(key, done);
    return done;
  }

  /**
   * Reads again every remembered job of the current server not known to be terminal ({@link recordsToResume}): one
   * found ended is handled, and all those are told at once; one still running is followed, and handled when it
   * ends. One run at a time: a call during a run gets the NEXT run, started when that one ends and shared by every
   * call made meanwhile, since the run under way may have read the records, or leased the connection, before the
   * caller's job or connection change existed. Never rejects (failures are logged).
   * @returns the ends handled by the run the call got (not those of the jobs it follows).
   */
  resume(): Promise<HandledEnd[]> {
    if (!this.resuming) return this.run();
    this.again ??= this.resuming.then(() => {
      this.again = undefined;
      return this.run();
    });
    return this.again;
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

  /** True when this process tells `end`: handled here (not by another process), its outputs downloaded, its client's. */
  private toldHere(end: HandledEnd): boolean {
    return isTerminalStatus(end.job.status) && end.downloadError === undefined && !end.toldElsewhere && this.tells(end);
  }

  /** Starts a run of {@link resumeOnce} as the one under way. */
  private run(): Promise<HandledEnd[]> {
    const run = this.resumeOnce()
      .catch((err: unknown) => {
        if (!AbortError.is(err) && !this.lifetime.signal.aborted)
          this.options.log.warn('job-ends', `reading remembered jobs failed: ${describeError(err)}`);
        return [];
      })
      .finally(() => {
        if (this.resuming === run) this.resuming = undefined;
      });
    this.resuming = run;
    return run;
  }

  private async resumeOnce(): Promise<HandledEnd[]> {
    const lease = await this.options.jobs.lease();
    try {
      const { backend } = lease;
      const baseUrl = backend.baseUrl;
      const records = recordsToResume(await this.options.store.list(), baseUrl);
      // The claims of ends past their jobs' retention go (their records are gone too).
      await this.claims.prune().catch(() => 0);
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
      const told = ended.filter((e) => this.toldHere(e));
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
        if (JobLostError.is(err))
          this.options.log.info('job-ends', `job ${record.jobId!}: lost (the server no longer knows it)`);
        else if (!AbortError.is(err))
          this.options.log.warn(
            'job-ends',
            `job ${record.jobId!}: the watch ended without its end: ${describeError(err)}`,
          );
      },
    );
  }

  private async handle(
    baseUrl: string,
    job: Job,
    given: JobRecord | undefined,
    backend: JobBackend | undefined,
  ): Promise<HandledEnd> {
    const record = given ?? (await this.recordOf(baseUrl, job.id));
    const end: HandledEnd = { baseUrl, job, record, dir: undefined, files: [] };
    if (!isTerminalStatus(job.status)) return end;
    if (!this.tells(end)) {
      // Another client's job (the CLI downloads its own): its record learns the end, nothing else.
      if (record) await this.record(record, job);
      return end;
    }
    let claim: EndClaim;
    try {
      const answer = await this.claims.claim(baseUrl, job.id, {
        signal: this.lifetime.signal,
        expiresAt: job.expiresAt ?? record?.expiresAt,
      });
      if ('told' in answer) {
        // Handled by another process of this machine: its files are read, nothing is downloaded or told here.
        end.toldElsewhere = true;
        end.files = await existing(answer.told.files ?? []);
        this.options.log.info(
          'job-ends',
          `job ${job.id}: its end was handled by another process (pid ${answer.told.pid})`,
        );
        if (record) await this.record(record, job);
        return end;
      }
      claim = answer.mine;
    } catch (err) {
      end.downloadError = err;
      if (!AbortError.is(err))
        this.options.log.warn(
          'job-ends',
          `job ${job.id}: its end cannot be claimed in the state folder: ${describeError(err)}`,
        );
      return end;
    }
    if (job.status === 'succeeded' && job.outputs.length > 0) {
      try {
        end.dir = await this.options.outputDir(job.id, record);
        end.files = await this.download(job, end.dir, backend);
        this.options.log.info('job-ends', `job ${job.id}: ${end.files.length} output(s) in ${end.dir}`);
      } catch (err) {
        end.downloadError = err;
        if (!AbortError.is(err))
          this.options.log.warn('job-ends', `job ${job.id}: downloading its outputs failed: ${describeError(err)}`);
        // Not terminal in the record, and the claim given up: the next process that sees the end tries again.
        await claim.release();
        return end;
      }
    }
    if (record) await this.record(record, job);
    await claim
      .told(end.files)
      .catch((err: unknown) =>
        this.options.log.warn(
          'job-ends',
          `job ${job.id}: its end could not be marked told in the state folder: ${describeError(err)}`,
        ),
      );
    return end;
  }

  /** The outputs not complete in `dir` downloaded there; returns every output's path, in the job's order. */
  private async download(job: Job, dir: string, backend: JobBackend | undefined): Promise<string[]> {
    if (backend) return (await downloadMissingOutputs(backend, job, dir, this.lifetime.signal)).map((s) => s.path);
    const lease = await this.options.jobs.lease();
    try {
      return (
        await downloadMissingOutputs(lease.backend, job, dir, AbortSignal.any([lease.signal, this.lifetime.signal]))
      ).map((s) => s.path);
    } finally {
      lease.release();
    }
  }

  private async recordOf(baseUrl: string, jobId: string): Promise<JobRecord | undefined> {
    const records = await this.options.store.list().catch(() => []);
    return records.find((r) => r.baseUrl === baseUrl && r.jobId === jobId);
  }

  private async record(record: JobRecord, job: Job): Promise<void> {
    await this.options.store.recordStatus(record.idempotencyKey, job).then(
      () => undefined,
      (err: unknown) =>
        this.options.log.warn('job-ends', `job ${job.id}: the record could not be updated: ${describeError(err)}`),
    );
  }
}

/** The files of `files` that still exist (another process's outputs, as it told them). */
async function existing(files: readonly string[]): Promise<string[]> {
  const found = await Promise.all(
    files.map((f) =>
      fs.stat(f).then(
        (s) => s.isFile(),
        () => false,
      ),
    ),
  );
  return files.filter((_, i) => found[i]);
}
