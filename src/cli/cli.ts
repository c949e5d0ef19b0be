/**
 * The `comfy-cloud` command: a thin shell over the client core. `runCli` takes its streams, environment and
 * abort signal as arguments, so tests run it in-process.
 *
 * Exit codes: 0 success; 1 an API or network error, or a watched job that ended other than `succeeded`;
 * 2 bad usage, or a bad input file refused before any request; 130 interrupted.
 * Progress and messages go to stderr; with `--json`, stdout carries exactly one JSON document.
 */
import { Command, CommanderError, Option } from 'commander';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import {
  AbortError,
  ApiError,
  ComfyClient,
  ComfyError,
  InputError,
  InvalidWorkflowError,
  assertApiWorkflow,
  OutcomeUnknownError,
  StateStore,
  defaultStateDir,
  isTerminalStatus,
  submitDurably,
  assetReference,
  deploymentBaseUrl,
  discoverCompanion,
  setNodeInput,
  userAgent,
  whatToDo,
  VERSION,
  type ApiWorkflow,
  type DurableSubmission,
  type JobSnapshot,
} from '../core';
import { BarProgress, LineProgress, type ProgressView } from './progress';

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

/** Exit codes. */
export const Exit = { ok: 0, failed: 1, usage: 2, interrupted: 130 } as const;

/** A refusal of bad usage or input: exit code 2. */
class UsageError extends Error {}

interface GlobalOptions {
  baseUrl?: string;
  deployment?: string;
  apiKey?: string;
  timeout: string;
}

/**
 * Runs the CLI with `argv` (without the node and script paths) and returns the exit code.
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const err = (line: string): void => void io.stderr.write(line + '\n');
  const out = (text: string): void => void io.stdout.write(text.endsWith('\n') ? text : text + '\n');
  let exitCode: number = Exit.ok;

  const program = new Command('comfy-cloud')
    .description('Run ComfyUI workflows on the Comfy job service (v2 Job and Asset API).')
    .version(VERSION)
    .addOption(new Option('--base-url <url>', 'server base URL (env COMFY_BASE_URL; default: a running self-hosted companion, else http://127.0.0.1:8189)'))
    .addOption(new Option('--deployment <id>', 'a serverless deployment: its id, mounted under the base URL as /deployment/<id> (env COMFY_DEPLOYMENT)'))
    .addOption(new Option('--api-key <key>', 'API key, sent as a Bearer token to the base URL only (env COMFY_API_KEY)'))
    .addOption(new Option('--timeout <ms>', 'per-request timeout in ms').default('30000'))
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });

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
  const progressView = (quiet: boolean): ProgressView =>
    quiet ? { update: () => undefined, stop: () => undefined } : io.stderr.isTTY ? new BarProgress(io.stderr) : new LineProgress(err);

  /** Watches a job, prints its outcome, downloads its outputs; the exit code follows the final status. */
  const store = (): StateStore => new StateStore(defaultStateDir(io.env));
  const follow = async (c: ComfyClient, start: JobSnapshot | string, opts: { json?: boolean; out?: string; quiet?: boolean }, submission?: DurableSubmission): Promise<void> => {
    const view = progressView(Boolean(opts.quiet));
    let final: JobSnapshot;
    try {
      final = await c.watch(start, { signal: io.signal, onUpdate: (u) => view.update(u) });
    } finally {
      view.stop();
    }
    const job = final.job;
    // Keep the remembered record current (the job list shows it without asking the server).
    const remembered = submission?.idempotencyKey ?? (await store().list()).find((r) => r.jobId === job.id)?.idempotencyKey;
    if (remembered) await store().update(remembered, { lastStatus: job.status, expiresAt: job.expires_at ?? undefined }).catch(() => undefined);
    let files: string[] = [];
    if (job.status === 'succeeded' && opts.out) {
      const downloaded = await c.downloadOutputs(final, opts.out, { signal: io.signal });
      files = downloaded.map((d) => d.path);
      for (const f of downloaded) err(`saved ${f.path} (${f.bytes} bytes)`);
    }
    if (opts.json) out(JSON.stringify(job, null, 2));
    else {
      err(`job ${job.id} ${job.status}${job.error?.message ? `: ${job.error.message}${job.error.node_id ? ` (node ${job.error.node_id}${job.error.class_type ? `, ${job.error.class_type}` : ''})` : ''}` : ''}`);
      for (const f of files) out(f);
    }
    if (submission && !opts.json) err(`Idempotency-Key ${submission.idempotencyKey}`);
    if (job.status !== 'succeeded') exitCode = Exit.failed;
  };

  program
    .command('submit')
    .description('submit an API-format workflow JSON file')
    .argument('<workflow.json>', 'workflow file in API format')
    .option('--wait', 'watch the job to its end (exit 1 unless it succeeded)')
    .option('--out <dir>', 'with --wait: download every output into this folder (never overwrites)')
    .option('--idempotency-key <key>', 'the Idempotency-Key to present (default: a new UUID)')
    .option('--json', 'print the API\'s job object on stdout')
    .option('--quiet', 'no progress output')
    .option('--cancel-on-interrupt', 'with --wait: Ctrl-C also cancels the job on the server')
    .option('--input <NODE.FIELD=@file>', 'upload a file (deduplicated) and put its core/ASSET reference into that node input (repeatable)', collect, [] as string[])
    .action(async (file: string, opts: { wait?: boolean; out?: string; idempotencyKey?: string; json?: boolean; quiet?: boolean; cancelOnInterrupt?: boolean; input: string[] }) => {
      if (opts.out && !opts.wait) throw new UsageError('--out needs --wait (outputs exist once the job has succeeded)');
      let workflow = (await readWorkflowFile(file)) as ApiWorkflow;
      const inputs = opts.input.map(parseInputOption);
      for (const i of inputs) setNodeInput(workflow, i.nodeId, i.field, null); // checks node and field before any upload
      const c = await client();
      let submission: DurableSubmission | undefined;
      try {
        for (const i of inputs) {
          const up = await c.uploadFile(i.file, {}, { signal: io.signal });
          err(`${up.dedup ? 'already uploaded' : 'uploaded'} ${i.file} as asset ${up.asset.id}`);
          workflow = setNodeInput(workflow, i.nodeId, i.field, assetReference({ ...up.asset, hash: up.asset.hash ?? up.hash }));
        }
        submission = await submitDurably(c, workflow, {
          store: store(),
          idempotencyKey: opts.idempotencyKey,
          workflowFile: path.resolve(file),
          client: 'cli',
          signal: io.signal,
          onWait: (w) => err(`${w.reason}: retrying in ${Math.ceil(w.delayMs / 1000)} s…`),
        });
        const job = submission.snapshot.job;
        if (!opts.json || opts.wait) err(`${submission.adopted ? 'found' : 'submitted'} job ${job.id} (${job.status})`);
        if (!opts.wait) {
          if (opts.json) out(JSON.stringify(job, null, 2));
          else {
            out(job.id);
            err(`Idempotency-Key ${submission.idempotencyKey}`);
          }
          return;
        }
        await follow(c, submission.snapshot, opts, submission);
      } catch (e) {
        if (AbortError.is(e) && submission && opts.cancelOnInterrupt) {
          err(`interrupted: canceling job ${submission.snapshot.job.id}…`);
          const canceled = await c.cancelJob(submission.snapshot).catch((ce: unknown) => {
            err(`cancel failed: ${describe(ce)}`);
            return undefined;
          });
          if (canceled) err(`job ${canceled.job.id} is ${canceled.job.status}`);
        } else if (AbortError.is(e) && submission) {
          err(`interrupted: job ${submission.snapshot.job.id} keeps running on the server (watch it with: comfy-cloud watch ${submission.snapshot.job.id})`);
        }
        throw e;
      } finally {
        await c.close();
      }
    });

  program
    .command('upload')
    .description('upload a file as an asset (identical bytes are never uploaded twice)')
    .argument('<file>')
    .option('--file-path <name>', 'name kept with the asset (default: the file\'s name)')
    .option('--tag <tag>', 'tag (repeatable)', collect, [] as string[])
    .option('--json', 'print the asset record')
    .action(async (file: string, opts: { filePath?: string; tag: string[]; json?: boolean }) => {
      await withClient(async (c) => {
        const up = await c.uploadFile(file, { filePath: opts.filePath, tags: opts.tag }, { signal: io.signal });
        err(up.dedup ? `already there (${up.hash}): no bytes sent` : `uploaded ${up.hash}`);
        if (opts.json) out(JSON.stringify(up.asset, null, 2));
        else out(up.asset.id);
      });
    });

  program
    .command('asset')
    .description('print an asset\'s record (with a fresh url)')
    .argument('<asset-id>')
    .action(async (id: string) => {
      await withClient(async (c) => {
        out(JSON.stringify((await c.assets.get(id, io.signal)).asset, null, 2));
      });
    });

  program
    .command('delete-asset')
    .description('delete an asset')
    .argument('<asset-id>')
    .action(async (id: string) => {
      await withClient(async (c) => {
        await c.assets.delete(id, io.signal);
        err(`deleted asset ${id}`);
      });
    });

  program
    .command('jobs')
    .description('list the jobs submitted from this machine (CLI and VS Code), with their current state')
    .option('--json', 'print {remembered: [{record, job}], server: [job]} as JSON')
    .option('--all', 'also the jobs of other servers than --base-url')
    .action(async (opts: { json?: boolean; all?: boolean }) => {
      const records = await store().list();
      await withClient(async (c) => {
        const mine = records.filter((r) => opts.all || r.baseUrl === c.http.baseUrl);
        const rows = [];
        for (const r of mine) {
          let job: JobSnapshot['job'] | undefined;
          let problem: string | undefined;
          if (r.jobId && r.baseUrl === c.http.baseUrl) {
            try {
              job = (await c.getJob(r.jobId, { signal: io.signal })).job;
              if (isTerminalStatus(job.status) || job.status !== r.lastStatus) await store().update(r.idempotencyKey, { lastStatus: job.status, expiresAt: job.expires_at ?? undefined });
            } catch (e) {
              problem = ComfyError.is(e) ? e.code : String(e);
            }
          }
          rows.push({ record: r, job, problem });
        }
        // The surface's own listing where it answers (the self-hosted companion, the emulator; FACTS.md "Job
        // listing"): jobs of this account that this machine did not submit, e.g. from another machine.
        const known = new Set(mine.map((r) => r.jobId).filter(Boolean));
        let server: JobSnapshot['job'][] = [];
        try {
          server = (await c.jobs.list({ limit: 100, signal: io.signal })).jobs.filter((j) => !known.has(j.id));
        } catch (e) {
          if (AbortError.is(e)) throw e;
          // No listing on this surface (404, 501): the remembered jobs are the answer. Any other failure is said.
          if (!(ApiError.is(e) && (e.status === 404 || e.status === 501))) err(`(the server's job listing failed: ${ComfyError.is(e) ? e.code : String(e)})`);
        }
        if (opts.json) out(JSON.stringify({ remembered: rows, server }, null, 2));
        else if (rows.length === 0 && server.length === 0) err('no remembered jobs for ' + c.http.baseUrl);
        else {
          for (const { record: r, job, problem } of rows) {
            const status = job?.status ?? (r.state === 'created' ? (r.lastStatus ?? '?') : r.state);
            out([r.jobId ?? '(no job id)', status, r.submittedAt, r.workflowFile ? path.basename(r.workflowFile) : '-', problem ? `(${problem})` : ''].join('  ').trim());
          }
          for (const j of server) out([j.id, j.status, j.created_at, '(listed by the server, not submitted from here)'].join('  '));
        }
      });
    });

  program
    .command('status')
    .description('print a job\'s current state')
    .argument('<job-id>')
    .option('--json', 'print the API\'s job object')
    .action(async (id: string, opts: { json?: boolean }) => {
      await withClient(async (c) => {
        const { job } = await c.getJob(id, { signal: io.signal, onRetry: (r) => err(`${r.reason}: retrying in ${Math.ceil(r.delayMs / 1000)} s…`) });
        if (opts.json) out(JSON.stringify(job, null, 2));
        else out(summarize(job));
      });
    });

  program
    .command('watch')
    .description('watch a job to its end (exit 1 unless it succeeded)')
    .argument('<job-id>')
    .option('--out <dir>', 'download every output into this folder when it succeeded')
    .option('--json', 'print the final job object')
    .option('--quiet', 'no progress output')
    .action(async (id: string, opts: { json?: boolean; out?: string; quiet?: boolean }) => {
      await withClient(async (c) => {
        await follow(c, id, opts);
      });
    });

  program
    .command('cancel')
    .description('request cancellation of a job')
    .argument('<job-id>')
    .option('--json', 'print the job object returned')
    .action(async (id: string, opts: { json?: boolean }) => {
      await withClient(async (c) => {
        const { job } = await c.cancelJob(id, { signal: io.signal, onRetry: (r) => err(`${r.reason}: retrying in ${Math.ceil(r.delayMs / 1000)} s…`) });
        if (opts.json) out(JSON.stringify(job, null, 2));
        else out(summarize(job));
      });
    });

  program
    .command('workflow')
    .description('print the workflow behind a job (its format on stderr)')
    .argument('<job-id>')
    .option('--json', 'print the whole response ({format, workflow})')
    .action(async (id: string, opts: { json?: boolean }) => {
      await withClient(async (c) => {
        const res = await c.jobs.workflow(id, io.signal);
        const { requestId: _requestId, ...body } = res;
        if (opts.json) out(JSON.stringify(body, null, 2));
        else {
          // Always branch on format: `api` is the executed graph, `save` the editor's saved workflow.
          err(res.format === 'api' ? 'format: api (the executed API-format graph)' : res.format === 'save' ? 'format: save (the workflow as saved in the editor)' : `format: ${res.format}`);
          out(JSON.stringify(res.workflow, null, 2));
        }
      });
    });

  program
    .command('download')
    .description('download an asset\'s content to a file (refuses to overwrite)')
    .argument('<asset-id>')
    .argument('<file>')
    .option('--force', 'replace the file if it exists')
    .action(async (assetId: string, file: string, opts: { force?: boolean }) => {
      await withClient(async (c) => {
        const res = await c.downloadAsset(assetId, file, { signal: io.signal, overwrite: Boolean(opts.force) });
        err(`saved ${res.bytes} bytes`);
        out(res.path);
      });
    });

  program
    .command('emulator')
    .description('run the local emulator of the job service (prints its base URL first)')
    .option('--host <host>', 'loopback address to bind', '127.0.0.1')
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
          throw e instanceof TypeError ? new UsageError(e.message) : e;
        });
      out(emulator.baseUrl);
      err(`emulator listening on ${emulator.baseUrl} (Ctrl-C to stop)`);
      await new Promise<void>((resolve) => {
        if (io.signal?.aborted) resolve();
        io.signal?.addEventListener('abort', () => resolve(), { once: true });
      });
      await emulator.close();
      err('emulator stopped');
    });

  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (e) {
    return reportError(e, err);
  }
}

function reportError(e: unknown, err: (line: string) => void): number {
  if (e instanceof CommanderError) {
    if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') return Exit.ok;
    return Exit.usage;
  }
  if (e instanceof UsageError) {
    err(`error: ${e.message}`);
    return Exit.usage;
  }
  if (AbortError.is(e)) {
    err('interrupted');
    return Exit.interrupted;
  }
  if (InputError.is(e)) {
    err(`error [${e.code}]: ${e.message}`);
    return Exit.usage;
  }
  err(`error ${describe(e)}`);
  return Exit.failed;
}

/** `[code] message (request-id …)`, with node errors listed for invalid_workflow. */
function describe(e: unknown): string {
  if (e instanceof InvalidWorkflowError) {
    const lines = e.nodeErrors.map((n) => `  node ${n.nodeId}${n.field ? ` input ${n.field}` : ''}: ${n.reason}`);
    return `[${e.code}] ${e.message}${e.requestId ? ` (request-id ${e.requestId})` : ''}${lines.length ? '\n' + lines.join('\n') : ''}`;
  }
  if (ApiError.is(e)) {
    const advice = e.code === 'unauthorized' ? 'set an API key with --api-key or COMFY_API_KEY' : whatToDo(e.code);
    const retry = e.retryAfter !== undefined ? ` (Retry-After ${e.retryAfter} s)` : '';
    return `[${e.code}] HTTP ${e.status}: ${e.message}${retry}${advice ? ` — ${advice}` : ''}${e.requestId ? ` (request-id ${e.requestId})` : ''}`;
  }
  if (OutcomeUnknownError.is(e)) return `[${e.code}] ${e.message}\n  list remembered jobs with: comfy-cloud jobs`;
  if (ComfyError.is(e)) return `[${e.code}] ${e.message}${e.requestId ? ` (request-id ${e.requestId})` : ''}`;
  return e instanceof Error ? e.message : String(e);
}

/**
 * Reads and checks a workflow file before any request.
 * @throws InputError `unreadable`, `bad_json`, `workflow_format_ui`, `not_api_format` (exit 2).
 */
export async function readWorkflowFile(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (e) {
    throw new InputError('unreadable', `cannot read ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
  let workflow: unknown;
  try {
    workflow = JSON.parse(text);
  } catch (e) {
    throw new InputError('bad_json', `${path.basename(file)} is not valid JSON (${(e as Error).message}); fix the file or export the workflow again.`);
  }
  assertApiWorkflow(workflow);
  return workflow;
}

function summarize(job: { id: string; status: string; queue_position?: number | null; progress?: { value?: number | null; nodes_done?: number | null; nodes_total?: number | null } | null; outputs: unknown[]; error?: { message?: string | null } | null }): string {
  const parts = [`${job.id} ${job.status}`];
  if (job.queue_position != null) parts.push(`queue position ${job.queue_position}`);
  if (job.progress?.nodes_total) parts.push(`node ${job.progress.nodes_done ?? 0}/${job.progress.nodes_total}`);
  if (job.outputs.length) parts.push(`${job.outputs.length} output(s)`);
  if (job.error?.message) parts.push(`error: ${job.error.message}`);
  return parts.join(' · ');
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
