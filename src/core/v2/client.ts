/**
 * The idiomatic layer over the low-level operations: submit-and-watch, downloading a job's outputs. The CLI and
 * the extension both drive jobs through {@link V2Client}; neither speaks HTTP itself.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { AssetsApi, type AssetResult, type UploadMetadata } from './assets';
import { ApiError } from '../http/errors';
import { HashMismatchError, errorFromResponse } from './errors';
import { hashFile } from '../util/hash';
import type { HashCache } from '../state/hashCache';
import { systemClock, type Clock } from '../http/clock';
import { downloadIntoFolder, downloadToFile, type DownloadOptions, type DownloadResult } from '../http/download';
import { safeFileName } from '../util/fileNames';
import { assertUploadFile } from '../util/inputFile';
import { Transport, type TransportOptions } from '../http/transport';
import { JobsApi, type JobSnapshot, type SubmitOptions, type Submission } from './jobs';
import type { JobOutput } from './schemas';
import { withRetry, type RetryOptions, type RetryPolicy } from '../http/retry';
import type { StateStore } from '../state/stateStore';
import { submitDurably, type DurableSubmitOptions } from './submission';
import { surfaceFromBaseUrl, type Surface } from './surface';
import { StreamBudget, watchJob, type WatchOptions, type WatchUpdate } from './watch';

/**
 * Where an upload is: `hashing` the file (BLAKE3, in a worker); `checking` whether the server has the bytes (HEAD
 * by-hash); `minting` an asset from bytes already there (a dedup hit: no bytes are sent); `sending` the bytes
 * (multipart POST).
 */
export type UploadPhase = 'hashing' | 'checking' | 'minting' | 'sending';

/** How to build a client: the transport's options plus an injectable clock. */
export interface V2ClientOptions extends TransportOptions {
  clock?: Clock;
  /** Event streams open at once across this client's watches; the rest poll. Default 4. */
  maxStreams?: number;
  /** Upload hashes remembered by path, size, mtime and inode: an unchanged file is not hashed again. Default none. */
  hashCache?: HashCache;
}

/** One downloaded output. */
export interface DownloadedOutput extends DownloadResult {
  output: JobOutput;
}

/** Options of {@link V2Client.run}. */
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
  /**
   * Remember the submission in this state store (key written before the request, unknown outcomes never
   * resubmitted; see submission.ts). Without a store the job is submitted once with a fresh key, unremembered.
   */
  store?: StateStore;
  /** Recorded with the submission. */
  workflowFile?: string;
  clientName?: 'cli' | 'vscode' | 'core';
  /** Told before a wait for a retry (queue full, deployment starting). */
  onWait?: (info: { delayMs: number; reason: string }) => void;
}

/** The outcome of a run: the submission, the final job (from GET) and the files written. */
interface RunResult {
  submission: Submission;
  final: JobSnapshot;
  files: DownloadedOutput[];
}

/** A client of one server (one base URL and API key). Close it when done. */
export class V2Client {
  readonly http: Transport;
  readonly jobs: JobsApi;
  readonly assets: AssetsApi;
  readonly surface: Surface;
  readonly clock: Clock;
  /** The bound on event streams shared by this client's watches. */
  readonly streams: StreamBudget;
  private readonly hashCache: HashCache | undefined;

  /** @throws InputError `bad_base_url`. */
  constructor(options: V2ClientOptions) {
    this.surface = surfaceFromBaseUrl(options.baseUrl);
    // The v2 envelope's factory: typed errors per code (v2/errors.ts), unless the caller gives its own.
    this.http = new Transport({ ...options, errorFactory: options.errorFactory ?? errorFromResponse });
    this.jobs = new JobsApi(this.http);
    this.assets = new AssetsApi(this.http);
    this.clock = options.clock ?? systemClock;
    this.streams = new StreamBudget(options.maxStreams ?? 4);
    this.hashCache = options.hashCache;
  }

  /**
   * GET a job, retrying `rate_limited` after its Retry-After and 5xx/network failures with backoff (retry.ts).
   * @throws NotFoundError and other definitive ApiErrors at once; the last error when the retry budget is spent.
   */
  getJob(
    job: JobSnapshot | string,
    options: { signal?: AbortSignal; onRetry?: RetryOptions['onRetry']; policy?: RetryPolicy } = {},
  ): Promise<JobSnapshot> {
    return withRetry('read', () => this.jobs.get(job, options.signal), {
      clock: this.clock,
      signal: options.signal,
      onRetry: options.onRetry,
      policy: options.policy,
    });
  }

  /**
   * POST cancel (idempotent, so retried like a read: Job and Asset API v2, POST /api/v2/jobs/{id}/cancel; not shown
   * there; public sources: cancelling a finished job returns it unchanged).
   */
  cancelJob(
    job: JobSnapshot | string,
    options: { signal?: AbortSignal; onRetry?: RetryOptions['onRetry'] } = {},
  ): Promise<JobSnapshot> {
    return withRetry('cancel', () => this.jobs.cancel(job, options.signal), {
      clock: this.clock,
      signal: options.signal,
      onRetry: options.onRetry,
    });
  }

  /** Watches a job to its terminal status; see {@link watchJob}. */
  watch(job: JobSnapshot | string, options: WatchOptions = {}): Promise<JobSnapshot> {
    return watchJob(this.jobs, job, { clock: this.clock, streams: this.streams, ...options });
  }

  /**
   * Submits a workflow once: with a `store`, durably (the Idempotency-Key written before sending, an unknown outcome
   * never resubmitted: submission.ts {@link submitDurably}); without, one POST with a fresh key, unremembered.
   * @returns the submission (the job as accepted, with its Idempotency-Key).
   * @throws as {@link submitDurably} and {@link JobsApi.submit}.
   */
  async submit(
    workflow: unknown,
    options: Pick<
      RunOptions,
      'store' | 'idempotencyKey' | 'partnerApiKey' | 'workflowFile' | 'clientName' | 'signal' | 'onWait'
    > &
      Pick<DurableSubmitOptions, 'batchId' | 'policy'> = {},
  ): Promise<Submission> {
    if (!options.store) return this.jobs.submit(workflow, options);
    const durable = await submitDurably(this, workflow, {
      store: options.store,
      idempotencyKey: options.idempotencyKey,
      partnerApiKey: options.partnerApiKey,
      workflowFile: options.workflowFile,
      client: options.clientName,
      batchId: options.batchId,
      policy: options.policy,
      signal: options.signal,
      onWait: options.onWait,
    });
    return { ...durable.snapshot, idempotencyKey: durable.idempotencyKey };
  }

  /**
   * Submits a workflow, watches it to the end and, when it succeeded and `outputDir` is set, downloads every
   * output there (free names: nothing is overwritten).
   * @throws as {@link JobsApi.submit}, {@link watchJob} and {@link downloadToFile}.
   */
  async run(workflow: unknown, options: RunOptions = {}): Promise<RunResult> {
    const submission = await this.submit(workflow, options);
    options.onSubmitted?.(submission);
    const final = await this.watch(submission, {
      ...options.watch,
      signal: options.signal,
      onUpdate: options.onUpdate,
    });
    await options.store
      ?.recordStatus(submission.idempotencyKey, { status: final.job.status, expiresAt: final.job.expires_at })
      .catch(() => undefined);
    const files =
      final.job.status === 'succeeded' && options.outputDir
        ? await this.downloadOutputs(final, options.outputDir, {
            signal: options.signal,
            onProgress: options.onDownload,
          })
        : [];
    return { submission, final, files };
  }

  /**
   * Downloads every output of a job into `dir` (created if missing), one after the other. Each file is named from
   * the output's `name`, else the response's Content-Disposition filename, else the output's `id` (`.png` added for
   * a PNG), every one through {@link safeFileName} and checked to land inside the real folder; the first free name
   * is claimed atomically, so concurrent downloads into the same folder (other jobs, other processes) never take
   * the same name or share a partial file, and nothing is overwritten (hostile file names cannot escape or clobber).
   * Where `hash` is given the bytes are verified.
   * @returns one entry per output, in order; `path` is the file written.
   * @throws InputError `unsafe_path`; otherwise as {@link downloadIntoFolder}.
   */
  async downloadOutputs(
    snapshot: JobSnapshot,
    dir: string,
    options: Omit<DownloadOptions, 'overwrite'> = {},
  ): Promise<DownloadedOutput[]> {
    const files: DownloadedOutput[] = [];
    for (const output of snapshot.job.outputs) {
      const fallback = `${output.id}${output.content_type === 'image/png' ? '.png' : ''}`;
      const result = await downloadIntoFolder(
        this.http,
        this.jobs.outputUrl(snapshot, output),
        dir,
        (disposition) => safeFileName(output.name, safeFileName(disposition, fallback)),
        {
          ...options,
          // The part is named for this job's output: two jobs never resume each other's bytes, even if a server
          // reused an output id.
          resumeKey: `output:${snapshot.job.id}:${output.id}`,
          expectedHash: output.hash,
        },
      );
      files.push({ ...result, output });
    }
    return files;
  }

  /**
   * Downloads an asset's content (`GET /api/v2/assets/{id}/content`): resumes a partial download of the same asset,
   * verifies the bytes when the record has a hash.
   * - `file` a file path: written there; an existing file is refused unless `overwrite` (InputError `file_exists`,
   *   whose message says that `--force` replaces it).
   * - `file` a directory (an existing one, or a path ending in a separator), or no file: written into that folder
   *   (default the current one) under the record's `file_path`, else the response's Content-Disposition filename,
   *   else the asset id, every one through {@link safeFileName} and checked to land inside the real folder (a
   *   hostile name cannot escape it); the first free name is taken, or with `overwrite` the plain name replaced.
   * @returns the result; `path` is the file written.
   * @throws InputError `file_exists`, `unsafe_path`; NotFoundError for an unknown asset; as {@link downloadToFile}.
   */
  async downloadAsset(assetId: string, file?: string, options: DownloadOptions = {}): Promise<DownloadResult> {
    const { asset } = await this.assets.get(assetId, options.signal);
    const url = this.assets.contentUrl(assetId);
    const withKey: DownloadOptions = { resumeKey: assetId, expectedHash: asset.hash, ...options };
    const isFolder =
      file === undefined ||
      file === '' ||
      /[\\/]$/.test(file) ||
      (await fs.stat(file).then(
        (stat) => stat.isDirectory(),
        () => false,
      )); // follows a symlink to a folder
    if (isFolder) {
      const name = (disposition: string | undefined): string =>
        safeFileName(asset.file_path, safeFileName(disposition, asset.id));
      return downloadIntoFolder(this.http, url, file || '.', name, withKey);
    }
    return downloadToFile(this.http, url, file, withKey);
  }

  /** BLAKE3 of a file as the upload computes it (`blake3:<hex>`), in a worker thread. */
  hashForUpload(file: string, options: { signal?: AbortSignal } = {}): Promise<string> {
    return hashFile(file, options);
  }

  /**
   * Uploads a file unless its bytes are already there (Job and Asset API v2, What the service does, design rule 3:
   * identical inputs are not uploaded twice; the steps as the official SDK takes them): BLAKE3 in a worker →
   * HEAD by-hash → 200: create from hash (a dedup hit, no bytes sent); 404: streamed multipart upload with
   * `expected_hash` and an Idempotency-Key. A 404 `blob_not_found` from from-hash (the blob went away between the
   * two calls) falls back to the full upload. A 409 `hash_mismatch` (the file changed while uploading) re-hashes
   * (past the hash cache, whose entry is dropped) and tries once more. With a {@link HashCache}, an unchanged file is
   * not hashed again.
   * `onPhase` is told each step before it starts (so progress can say hashing, then sending): `hashing`,
   * `checking`, then `minting` (a dedup hit) or `sending`; after a `hash_mismatch` the steps repeat.
   * @returns the asset, whether it was a dedup hit, and the hash.
   * @throws HashMismatchError when the file keeps changing; InputError `unreadable`; ApiErrors; network errors.
   */
  async uploadFile(
    file: string,
    meta: Omit<UploadMetadata, 'expectedHash'> = {},
    options: { signal?: AbortSignal; onPhase?: (phase: UploadPhase) => void } = {},
  ): Promise<AssetResult & { dedup: boolean; hash: string }> {
    await assertUploadFile(file);
    const filePath = meta.filePath ?? path.basename(file);
    const tell = options.onPhase ?? ((): void => undefined);
    for (let attempt = 1; ; attempt++) {
      const compute = (): Promise<string> => hashFile(file, options);
      tell('hashing');
      const hash =
        this.hashCache && attempt === 1 ? (await this.hashCache.hashOf(file, compute)).hash : await compute();
      tell('checking');
      if (await this.assets.existsByHash(hash, options.signal)) {
        try {
          tell('minting');
          const minted = await this.assets.fromHash(hash, { ...meta, filePath }, options.signal);
          return { ...minted, dedup: true, hash };
        } catch (err) {
          if (!ApiError.hasCode(err, 'blob_not_found')) throw err;
        }
      }
      try {
        tell('sending');
        const uploaded = await this.assets.upload(file, { ...meta, filePath, expectedHash: hash }, options);
        return { ...uploaded, dedup: uploaded.asset.created_new === false || uploaded.status === 200, hash };
      } catch (err) {
        if (!(err instanceof HashMismatchError) || attempt >= 2) throw err;
        await this.hashCache?.forget(file);
      }
    }
  }

  /** Releases connections. */
  close(): Promise<void> {
    return this.http.close();
  }
}
