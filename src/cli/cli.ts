/**
 * The `comfy-cloud` command: a thin shell over the client core. `runCli` takes its streams, environment and
 * abort signal as arguments, so tests run it in-process.
 *
 * Exit codes: 0 success; 1 an API or network error, or a watched job that ended other than `succeeded`;
 * 2 bad usage (no command too), or a bad input file refused before any request; 130 interrupted.
 * stdout carries results only (output.ts): `submit` prints the job id first, then with `--wait --out` each path
 * written; `download` the path written; with `--json`, exactly one JSON document (an error too). Progress and
 * messages go to stderr (`--quiet` silences them). Global options may stand anywhere on the command line.
 */
import { Command, CommanderError, Option } from 'commander';
import * as path from 'node:path';
import {
  AbortError,
  ApiError,
  ComfyClient,
  ComfyError,
  DEFAULT_RETRY_POLICY,
  InputError,
  Redactor,
  StateStore,
  defaultStateDir,
  isTerminalStatus,
  submitDurably,
  assetReference,
  deploymentBaseUrl,
  discoverCompanion,
  readWorkflowFile,
  reconcilePending,
  setNodeInput,
  userAgent,
  VERSION,
  type ApiWorkflow,
  type DurableSubmission,
  type JobRecord,
  type JobSnapshot,
} from '../core';
import { Exit, Output, UsageError, describe, shown } from './output';
import { BarProgress, LineProgress, type ProgressView } from './progress';

export { Exit } from './output';
export { readWorkflowFile } from '../core';

/** Where the CLI reads and writes; `process` in the real command, buffers in tests. */
export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /** Aborts the running command (Ctrl-C). */
  signal?: AbortSignal;
  /** Starts the emulator for `comfy-cloud emulator` (injected so the core CLI stays small in tests). */
  startEmulator?: (options: EmulatorCliOptions) => Promise<{ baseUrl: string; close(): Promise<void> }>;
}

/** Options of `comfy-cloud emulator`. */
export interface EmulatorCliOptions {
  host: string;
  port: number;
  tokens: string[];
  mountPrefix?: string;
  nodeDelayMs: number;
  concurrency: number;
  dataDir?: string;
  signedUrls: boolean;
  /** Fault specs (`--fault`), read by the emulator's parseFaultSpec. */
  faults: string[];
  control: boolean;
}

interface GlobalOptions {
  baseUrl?: string;
  deployment?: string;
  apiKey?: string;
  timeout: string;
  json?: boolean;
  quiet?: boolean;
}

/** Job lookups of `jobs` at once, and the time each may take (ms): a slow server never holds the list up. */
const LOOKUP_CONCURRENCY = 4;
const LOOKUP_BUDGET_MS = 10_000;

/**
 * Runs the CLI with `argv` (without the node and script paths) and returns the exit code.
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let exitCode: number = Exit.ok;
  const redactor = new Redactor();
  if (io.env.COMFY_API_KEY) redactor.add(io.env.COMFY_API_KEY);

  const program = new Command('comfy-cloud')
    .description('Run ComfyUI workflows on the Comfy job service (v2 Job and Asset API).')
    .version(VERSION)
    .addOption(new Option('--base-url <url>', 'server base URL (env COMFY_BASE_URL; default: a running self-hosted companion, else http://127.0.0.1:8189)'))
    .addOption(new Option('--deployment <id>', 'a serverless deployment: its id, mounted under the base URL as /deployment/<id> (env COMFY_DEPLOYMENT)'))
    .addOption(new Option('--api-key <key>', 'API key, sent as a Bearer token to the base URL only (env COMFY_API_KEY)'))
    .addOption(new Option('--timeout <ms>', 'time allowed for an answer to start, and between two bytes of it, in ms').default('30000'))
    .addOption(new Option('--json', 'print results (and errors) as one JSON document on stdout'))
    .addOption(new Option('--quiet', 'no progress or messages on stderr (results and errors still print)'))
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });
  const output = new Output({ stdout: io.stdout, stderr: io.stderr, redactor, flags: () => program.opts<GlobalOptions>() });
  program.hook('preAction', () => {
    const key = program.opts<GlobalOptions>().apiKey;
    if (key) redactor.add(key);
  });

  /**
   * The base URL: --base-url, else $COMFY_BASE_URL, else a running self-hosted companion found from its state file
   * (FACTS.md), else the companion's default address; with --deployment, that deployment under it.
   */
  const baseUrl = async (): Promise<string> => {
    const g = program.opts<GlobalOptions>();
    const base = g.baseUrl || io.env.COMFY_BASE_URL || (await discoverCompanion(io.env))?.url || 'http://127.0.0.1:8189';
    const deployment = g.deployment || io.env.COMFY_DEPLOYMENT;
    return deployment ? deploymentBaseUrl(base, deployment) : base;
  };
  const client = async (): Promise<ComfyClient> => {
    const g = program.opts<GlobalOptions>();
    const timeoutMs = Number(g.timeout);
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new UsageError(`--timeout must be a positive number of ms (got ${g.timeout})`);
    return new ComfyClient({ baseUrl: await baseUrl(), apiKey: g.apiKey || io.env.COMFY_API_KEY || undefined, timeoutMs, userAgent: userAgent('cli') });
  };
  /** Runs `fn` with a client of the configured server, closed afterwards. */
  const withClient = async (fn: (c: ComfyClient) => Promise<void>): Promise<void> => {
    const c = await client();
    try {
      await fn(c);
    } finally {
      await c.close();
    }
  };
  const progressView = (): ProgressView =>
    program.opts<GlobalOptions>().quiet ? { update: () => undefined, stop: () => undefined } : io.stderr.isTTY ? new BarProgress(io.stderr) : new LineProgress((line) => output.message(line));
  const store = (): StateStore => new StateStore(defaultStateDir(io.env));
  const retryLine = (r: { reason: string; delayMs: number }): void => output.message(`${shown(r.reason)}: retrying in ${Math.ceil(r.delayMs / 1000)} s…`);

  /** What a watch knows of its job, for telling the truth when interrupted. */
  interface Followed {
    jobId?: string;
    status?: string;
    downloading?: boolean;
  }

  /** Watches a job, prints its outcome, downloads its outputs; the exit code follows the final status. */
  const follow = async (c: ComfyClient, start: JobSnapshot | string, opts: { out?: string; outageBudget?: string }, seen: Followed, submission?: DurableSubmission): Promise<void> => {
    const view = progressView();
    let final: JobSnapshot;
    try {
      final = await c.watch(start, {
        signal: io.signal,
        outageBudgetMs: seconds('--outage-budget', opts.outageBudget ?? '600') * 1000,
        onUpdate: (u) => {
          if (u.type === 'status') seen.status = u.status;
          view.update(u);
        },
      });
    } finally {
      view.stop();
    }
    const job = final.job;
    seen.status = job.status;
    // Keep the remembered record current (the job list shows it without asking the server).
    const remembered = submission?.idempotencyKey ?? (await store().list()).find((r) => r.jobId === job.id)?.idempotencyKey;
    if (remembered) await store().update(remembered, { lastStatus: job.status, expiresAt: job.expires_at ?? undefined }).catch(() => undefined);
    const files: string[] = [];
    if (job.status === 'succeeded' && opts.out) {
      seen.downloading = true;
      for (const f of await c.downloadOutputs(final, opts.out, { signal: io.signal })) {
        files.push(f.path);
        output.message(`saved ${f.path} (${f.bytes} bytes)`);
      }
      seen.downloading = false;
    }
    const failure = job.error?.message ? `: ${shown(job.error.message)}${job.error.node_id ? ` (node ${shown(job.error.node_id)}${job.error.class_type ? `, ${shown(job.error.class_type)}` : ''})` : ''}` : '';
    // A job that did not succeed is said even with --quiet: it is why the exit code is 1.
    (job.status === 'succeeded' ? output.message : output.warn).call(output, `job ${shown(job.id)} ${shown(job.status)}${failure}`);
    if (submission) output.message(`Idempotency-Key ${submission.idempotencyKey}`);
    if (output.json) output.document(job);
    else for (const f of files) output.result(f);
    if (job.status !== 'succeeded') exitCode = Exit.failed;
  };

  /** The truthful line for a Ctrl-C during a watch: a finished job is not "still running". */
  const interrupted = (seen: Followed, c: ComfyClient, cancel: boolean): Promise<void> | void => {
    const id = seen.jobId ? shown(seen.jobId) : undefined;
    if (!id) return;
    if (seen.status && isTerminalStatus(seen.status)) {
      output.warn(`interrupted: job ${id} had already ${shown(seen.status)}${seen.downloading ? `; its outputs were not all downloaded (again with: comfy-cloud watch ${id} --out DIR)` : ''}`);
      return;
    }
    if (!cancel) {
      output.warn(`interrupted: job ${id} keeps running on the server (watch it with: comfy-cloud watch ${id})`);
      return;
    }
    output.warn(`interrupted: canceling job ${id}…`);
    return c
      .cancelJob(seen.jobId!)
      .then((canceled) => output.warn(`job ${id} is ${shown(canceled.job.status)}`))
      .catch((ce: unknown) => void output.warn(`cancel failed: ${describe(ce)}`));
  };

  program
    .command('submit')
    .description('submit an API-format workflow JSON file; prints the job id (then, with --wait --out, the files written)')
    .argument('<workflow.json>', 'workflow file in API format (UTF-8)')
    .option('--wait', 'watch the job to its end (exit 1 unless it succeeded)')
    .option('--out <dir>', 'with --wait: download every output into this folder (never overwrites)')
    .option('--idempotency-key <key>', 'the Idempotency-Key to present (default: a new UUID)')
    .option('--cancel-on-interrupt', 'with --wait: Ctrl-C also cancels the job on the server')
    .option('--outage-budget <seconds>', 'with --wait: how long the server may stay unreachable before giving up', '600')
    .option('--input <NODE.FIELD=@file>', 'upload a file (deduplicated) and put its core/ASSET reference into that node input (repeatable)', collect, [] as string[])
    .action(async (file: string, opts: { wait?: boolean; out?: string; idempotencyKey?: string; cancelOnInterrupt?: boolean; outageBudget: string; input: string[] }) => {
      if (opts.out && !opts.wait) throw new UsageError('--out needs --wait (outputs exist once the job has succeeded)');
      if (opts.cancelOnInterrupt && !opts.wait) throw new UsageError('--cancel-on-interrupt needs --wait (without it the command ends once the job is submitted)');
      seconds('--outage-budget', opts.outageBudget);
      let workflow = (await readWorkflowFile(file)) as ApiWorkflow;
      const inputs = opts.input.map(parseInputOption);
      for (const i of inputs) setNodeInput(workflow, i.nodeId, i.field, null); // checks node and field before any upload
      const c = await client();
      const seen: Followed = {};
      try {
        for (const i of inputs) {
          const up = await c.uploadFile(i.file, {}, { signal: io.signal });
          output.message(`${up.dedup ? 'already uploaded' : 'uploaded'} ${i.file} as asset ${shown(up.asset.id)}`);
          workflow = setNodeInput(workflow, i.nodeId, i.field, assetReference({ ...up.asset, hash: up.asset.hash ?? up.hash }));
        }
        const submission = await submitDurably(c, workflow, {
          store: store(),
          idempotencyKey: opts.idempotencyKey,
          workflowFile: path.resolve(file),
          client: 'cli',
          signal: io.signal,
          onWait: retryLine,
        });
        const job = submission.snapshot.job;
        seen.jobId = job.id;
        seen.status = job.status;
        output.message(`${submission.adopted ? 'found' : 'submitted'} job ${shown(job.id)} (${shown(job.status)})`);
        if (!output.json) output.result(job.id);
        if (!opts.wait) {
          if (output.json) output.document(job);
          else output.message(`Idempotency-Key ${submission.idempotencyKey}`);
          return;
        }
        await follow(c, submission.snapshot, opts, seen, submission);
      } catch (e) {
        if (AbortError.is(e)) await interrupted(seen, c, Boolean(opts.cancelOnInterrupt));
        throw e;
      } finally {
        await c.close();
      }
    });

  program
    .command('upload')
    .description('upload a file as an asset (identical bytes are never uploaded twice); prints the asset id')
    .argument('<file>')
    .option('--file-path <name>', 'name kept with the asset (default: the file\'s name)')
    .option('--tag <tag>', 'tag (repeatable)', collect, [] as string[])
    .action(async (file: string, opts: { filePath?: string; tag: string[] }) => {
      await withClient(async (c) => {
        const up = await c.uploadFile(file, { filePath: opts.filePath, tags: opts.tag }, { signal: io.signal });
        output.message(up.dedup ? `already there (${up.hash}): no bytes sent` : `uploaded ${up.hash}`);
        if (output.json) output.document(up.asset);
        else output.result(up.asset.id);
      });
    });

  program
    .command('asset')
    .description('print an asset\'s record (with a fresh url) as JSON')
    .argument('<asset-id>')
    .action(async (id: string) => {
      await withClient(async (c) => {
        output.document((await c.assets.get(id, io.signal)).asset);
      });
    });

  program
    .command('delete-asset')
    .description('delete an asset')
    .argument('<asset-id>')
    .action(async (id: string) => {
      await withClient(async (c) => {
        await c.assets.delete(id, io.signal);
        output.message(`deleted asset ${shown(id)}`);
        if (output.json) output.document({ deleted: id });
      });
    });

  program
    .command('jobs')
    .description('list the jobs submitted from this machine (CLI and VS Code) with their current state, and those the server lists')
    .option('--all', 'also the jobs of other servers than --base-url')
    .action(async (opts: { all?: boolean }) => {
      await withClient(async (c) => {
        // Submissions left pending by a process that died, or of unknown outcome: looked up before listing.
        for (const r of await reconcilePending(c, store(), { signal: io.signal }).catch(() => [])) {
          if (r.outcome === 'adopted') output.message(`found job ${shown(r.jobId)} for the submission of ${r.record.submittedAt} (Idempotency-Key ${r.record.idempotencyKey})`);
        }
        const records = (await store().list()).filter((r) => opts.all || r.baseUrl === c.http.baseUrl);
        const rows: { record: JobRecord; job?: JobSnapshot['job']; problem?: string }[] = [];
        let lookups = 0;
        let failed = 0;
        // Looked up in parallel, each within a short budget; a row is printed as soon as its answer is in.
        await mapConcurrent(records, LOOKUP_CONCURRENCY, async (record) => {
          const row: (typeof rows)[number] = { record };
          if (record.jobId && record.baseUrl === c.http.baseUrl) {
            lookups++;
            try {
              const signal = io.signal ? AbortSignal.any([io.signal, AbortSignal.timeout(LOOKUP_BUDGET_MS)]) : AbortSignal.timeout(LOOKUP_BUDGET_MS);
              row.job = (await c.getJob(record.jobId, { signal, policy: { ...DEFAULT_RETRY_POLICY, maxAttempts: 2 } })).job;
              if (row.job.status !== record.lastStatus) await store().update(record.idempotencyKey, { lastStatus: row.job.status, expiresAt: row.job.expires_at ?? undefined }).catch(() => undefined);
            } catch (e) {
              if (io.signal?.aborted) throw e;
              failed++;
              row.problem = ComfyError.is(e) ? e.code : String(e);
            }
          }
          rows.push(row);
          if (!output.json) output.result(jobRow(row));
        });
        // The surface's own listing where it answers (the self-hosted companion, the emulator; FACTS.md "Job
        // listing"): jobs of this account that this machine did not submit, e.g. from another machine.
        const known = new Set(records.map((r) => r.jobId).filter(Boolean));
        let server: JobSnapshot['job'][] = [];
        try {
          server = (await c.jobs.list({ limit: 100, signal: io.signal })).jobs.filter((j) => !known.has(j.id));
        } catch (e) {
          if (AbortError.is(e)) throw e;
          // No listing on this surface (404, 501): the remembered jobs are the answer. Any other failure is said.
          if (!(ApiError.is(e) && (e.status === 404 || e.status === 501))) output.warn(`(the server's job listing failed: ${describe(e)})`);
        }
        if (output.json) output.document({ remembered: rows, server });
        else {
          for (const j of server) output.result([shown(j.id), shown(j.status), shown(j.created_at ?? '-'), '(listed by the server, not submitted from here)'].join('  '));
          if (rows.length === 0 && server.length === 0) output.message(`no remembered jobs for ${c.http.baseUrl}`);
        }
        if (lookups > 0 && failed === lookups) {
          output.warn(`every job lookup failed (${failed}); is the server at ${c.http.baseUrl} reachable?`);
          exitCode = Exit.failed;
        }
      });
    });

  program
    .command('forget')
    .description('remove a remembered submission (by job id or Idempotency-Key) from this machine\'s list; the job itself is not touched')
    .argument('<job-id|idempotency-key>')
    .action(async (id: string) => {
      const removed = await store().forget(id);
      if (!removed) throw new UsageError(`no remembered submission has the job id or Idempotency-Key ${id} (list them with: comfy-cloud jobs)`);
      output.message(`forgot the submission of ${removed.submittedAt}${removed.jobId ? ` (job ${shown(removed.jobId)})` : ''}, Idempotency-Key ${removed.idempotencyKey}`);
      if (output.json) output.document(removed);
      else output.result(removed.idempotencyKey);
    });

  program
    .command('status')
    .description('print a job\'s current state')
    .argument('<job-id>')
    .action(async (id: string) => {
      await withClient(async (c) => {
        const { job } = await c.getJob(id, { signal: io.signal, onRetry: retryLine });
        if (output.json) output.document(job);
        else output.result(summarize(job));
      });
    });

  program
    .command('watch')
    .description('watch a job to its end (exit 1 unless it succeeded)')
    .argument('<job-id>')
    .option('--out <dir>', 'download every output into this folder when it succeeded')
    .option('--outage-budget <seconds>', 'how long the server may stay unreachable before giving up', '600')
    .action(async (id: string, opts: { out?: string; outageBudget: string }) => {
      seconds('--outage-budget', opts.outageBudget);
      await withClient(async (c) => {
        const seen: Followed = { jobId: id };
        try {
          await follow(c, id, opts, seen);
        } catch (e) {
          if (AbortError.is(e)) await interrupted(seen, c, false);
          throw e;
        }
      });
    });

  program
    .command('cancel')
    .description('request cancellation of a job')
    .argument('<job-id>')
    .action(async (id: string) => {
      await withClient(async (c) => {
        const { job } = await c.cancelJob(id, { signal: io.signal, onRetry: retryLine });
        if (output.json) output.document(job);
        else output.result(summarize(job));
      });
    });

  program
    .command('workflow')
    .description('print the workflow behind a job (its format on stderr)')
    .argument('<job-id>')
    .action(async (id: string) => {
      await withClient(async (c) => {
        const res = await c.jobs.workflow(id, io.signal);
        const { requestId: _requestId, ...body } = res;
        if (output.json) output.document(body);
        else {
          // Always branch on format: `api` is the executed graph, `save` the editor's saved workflow.
          output.message(res.format === 'api' ? 'format: api (the executed API-format graph)' : res.format === 'save' ? 'format: save (the workflow as saved in the editor)' : `format: ${shown(res.format)}`);
          output.document(res.workflow);
        }
      });
    });

  program
    .command('download')
    .description('download an asset\'s content to a file, or into a folder under the asset\'s own name; prints the path written')
    .argument('<asset-id>')
    .argument('[file-or-folder]', 'target file, or an existing folder (default: the current folder)', '.')
    .option('--force', 'replace the file if it exists')
    .action(async (assetId: string, file: string, opts: { force?: boolean }) => {
      await withClient(async (c) => {
        const res = await c.downloadAsset(assetId, file, { signal: io.signal, overwrite: Boolean(opts.force) });
        output.message(`saved ${res.bytes} bytes`);
        if (output.json) output.document({ path: res.path, bytes: res.bytes });
        else output.result(res.path);
      });
    });

  program
    .command('emulator')
    .description('run the local emulator of the job service (prints its base URL first)')
    .option('--host <host>', 'address to bind (loopback; anything else is reachable from the network)', '127.0.0.1')
    .option('--port <n>', 'port (0: a free one)', '8189')
    .option('--token <token>', 'require this bearer token (repeatable; each is its own owner)', collect, [] as string[])
    .option('--mount-prefix <path>', 'serve only under this path, as a serverless deployment (e.g. /deployment/demo)')
    .option('--node-delay-ms <ms>', 'delay per executed node', '0')
    .option('--concurrency <n>', 'jobs running at once', '1')
    .option('--data-dir <dir>', 'keep blobs and outputs in this folder (default: a temporary one, removed on exit)')
    .option('--signed-urls', 'answer asset content with a 302 to a signed URL on a second loopback origin (as the cloud does)')
    .option('--fault <spec>', 'inject a fault, e.g. submit:afterCreate=502, get:status=500:every=3, events:dropAfter=2, content:cutAfter=100000 (repeatable)', collect, [] as string[])
    .option('--control', 'serve GET|POST /__emulator/faults to read or replace the fault plan at run time')
    .action(async (opts: { host: string; port: string; token: string[]; mountPrefix?: string; nodeDelayMs: string; concurrency: string; dataDir?: string; signedUrls?: boolean; fault: string[]; control?: boolean }) => {
      if (!io.startEmulator) throw new UsageError('the emulator is not available in this build');
      const port = intOption('--port', opts.port, 0, 65535);
      if (!isLoopback(opts.host)) {
        output.warn(`warning: --host ${opts.host} is not a loopback address: the emulator is reachable from the network, and it has no real authentication (tokens are for tests only)`);
      }
      const emulator = await io
        .startEmulator({
          host: opts.host,
          port,
          tokens: opts.token,
          mountPrefix: opts.mountPrefix,
          nodeDelayMs: intOption('--node-delay-ms', opts.nodeDelayMs, 0, 3_600_000),
          concurrency: intOption('--concurrency', opts.concurrency, 1, 64),
          dataDir: opts.dataDir,
          signedUrls: Boolean(opts.signedUrls),
          faults: opts.fault,
          control: Boolean(opts.control),
        })
        .catch((e: unknown) => {
          // The emulator refuses bad options (a fault spec it cannot read, a bad prefix) with a TypeError.
          if (e instanceof TypeError) throw new UsageError(e.message);
          const code = (e as NodeJS.ErrnoException).code;
          if (code === 'EADDRINUSE') throw new UsageError(`port ${port} on ${opts.host} is in use (another emulator or companion?); choose another with --port N, or --port 0 for a free one`);
          if (code === 'EADDRNOTAVAIL') throw new UsageError(`${opts.host} is not an address of this machine; use --host 127.0.0.1`);
          throw e;
        });
      output.result(emulator.baseUrl);
      output.message(`emulator listening on ${emulator.baseUrl} (Ctrl-C to stop)`);
      await new Promise<void>((resolve) => {
        if (io.signal?.aborted) resolve();
        io.signal?.addEventListener('abort', () => resolve(), { once: true });
      });
      await emulator.close();
      output.message('emulator stopped');
    });

  if (argv.length === 0) {
    // No command: the help, on stderr, and the usage exit code (a script that forgot its command fails).
    program.outputHelp({ error: true });
    return Exit.usage;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (e) {
    return reportError(e, output);
  }
}

function reportError(e: unknown, output: Output): number {
  if (e instanceof CommanderError) {
    if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version') return Exit.ok;
    // Commander has printed its own message (or the help, when a command is missing) on stderr.
    if (output.json) output.document({ error: { code: 'usage', message: e.message.replace(/^error: /, '') } });
    return Exit.usage;
  }
  if (e instanceof UsageError) return output.error(e, Exit.usage);
  if (AbortError.is(e)) {
    output.warn('interrupted');
    if (output.json) output.document({ error: { code: 'aborted', message: 'interrupted' } });
    return Exit.interrupted;
  }
  // Bad input refused before any request: the usage exit code.
  if (InputError.is(e)) return output.error(e, Exit.usage);
  return output.error(e, Exit.failed);
}

/** One row of `jobs`: id, status, submission time, workflow file, problem; server-chosen parts shown escaped. */
function jobRow({ record: r, job, problem }: { record: JobRecord; job?: JobSnapshot['job']; problem?: string }): string {
  const status = job?.status ?? (r.state === 'created' ? (r.lastStatus ?? '?') : r.state === 'outcome_unknown' || r.state === 'pending' ? 'unknown: check before resubmitting' : r.state);
  return [shown(r.jobId ?? '(no job id)'), shown(status), r.submittedAt, r.workflowFile ? path.basename(r.workflowFile) : '-', problem ? `(${shown(problem)})` : ''].join('  ').trim();
}

function summarize(job: { id: string; status: string; queue_position?: number | null; progress?: { value?: number | null; nodes_done?: number | null; nodes_total?: number | null } | null; outputs: unknown[]; error?: { message?: string | null } | null }): string {
  const parts = [`${shown(job.id)} ${shown(job.status)}`];
  if (job.queue_position != null) parts.push(`queue position ${job.queue_position}`);
  if (job.progress?.nodes_total) parts.push(`node ${job.progress.nodes_done ?? 0}/${job.progress.nodes_total}`);
  if (job.outputs.length) parts.push(`${job.outputs.length} output(s)`);
  if (job.error?.message) parts.push(`error: ${shown(job.error.message)}`);
  return parts.join(' · ');
}

/** Runs `fn` over `items` with at most `limit` at once; rejects with the first failure. */
async function mapConcurrent<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** True for a loopback host: 127.0.0.0/8, ::1, localhost. */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * Parses `--input NODE.FIELD=@file`.
 * @throws UsageError naming the expected form.
 */
export function parseInputOption(value: string): { nodeId: string; field: string; file: string } {
  const m = /^([^.=]+)\.([^=]+)=@(.+)$/.exec(value);
  if (!m) throw new UsageError(`--input takes NODE.FIELD=@file, e.g. --input 1.image=@photo.png (got ${value})`);
  return { nodeId: m[1], field: m[2], file: m[3] };
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function intOption(name: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`${name} must be a whole number from ${min} to ${max} (got ${value})`);
  return n;
}

/** A whole number of seconds (0 to 7 days). @throws UsageError. */
function seconds(name: string, value: string): number {
  return intOption(name, value, 0, 7 * 24 * 3600);
}
