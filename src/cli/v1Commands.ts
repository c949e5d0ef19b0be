/**
 * The CLI's deprecated v1 commands (Cloud API v1 (deprecated)), reached with the global `--api v1` (env
 * COMFY_API): the v2 commands `submit`, `status`, `watch` and `upload` branch here, and `object-info` exists only
 * here. Exit codes are v2's (cli.ts): 0; 1 an API or network error, a refused prompt, or a job that ended other than
 * succeeded; 2 bad usage or a bad input file, before any request; 130 on Ctrl-C (an AbortError, reported by cli.ts).
 * stdout: results only; progress and messages on stderr.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AbortError, type ApiWorkflow, type Job, type StateStore } from '../core';
import { V1Client, rememberPrompt, submitAndWatch, watchV1Job, type FileRef, type V1Submission } from '../core/v1';
import type { CliContext } from './context';
import { UsageError, shown } from './output';

/** The line said once per run under `--api v1` (Cloud API v1 (deprecated), Versioning: deprecated in favor of v2). */
export const V1_DEPRECATION_NOTE = 'note: the v1 API is deprecated; move to v2 by dropping --api v1 (unset COMFY_API): the same commands run on the v2 Job and Asset API';

/** Options of `--api v1 submit`. */
export interface V1SubmitCliOptions {
  wait?: boolean;
  out?: string;
  partnerKey?: string;
}

/**
 * `--api v1 submit <wf.json> [--wait] [--out DIR] [--partner-key K]`: stdout the prompt_id on its first line, then
 * with `--wait` each path written, one a line; with `--json` exactly one `{prompt_id, status, files}` (status: the
 * model's status the v1 one maps to, `queued` without `--wait`). A refused prompt: its message and each node error on
 * stderr, exit 1. The partner key (`--partner-key`, else $COMFY_PARTNER_KEY) goes as `extra_data.api_key_svc_org`.
 * The accepted prompt is remembered in the state store shared with VS Code, as its submissions are (v1/jobBackend.ts
 * `rememberPrompt`), so its Jobs view lists it; with `--wait` the record learns the final status.
 * `workflow` is the file's API-format graph, read and checked before any request (submit.ts: an image's prompt chunk,
 * or a UI-format workflow converted with `--convert`), and `--out` without `--wait` was refused there, before it.
 * @throws V1PromptError; ApiErrors; AbortError on Ctrl-C (the truthful line said first).
 */
export async function v1Submit(ctx: CliContext, file: string, workflow: ApiWorkflow, opts: V1SubmitCliOptions): Promise<void> {
  const { io, output } = ctx;
  const partnerKey = opts.partnerKey || io.env.COMFY_PARTNER_KEY || undefined;
  if (partnerKey) ctx.redactor.add(partnerKey);
  const store = ctx.store();
  await withV1(ctx, async (c) => {
    let submitted: V1Submission | undefined;
    let remembered: Promise<string | undefined> = Promise.resolve(undefined);
    const said = (s: V1Submission): void => {
      submitted = s;
      output.message(`submitted prompt ${shown(s.promptId)}${s.number !== undefined ? ` (queue number ${s.number})` : ''}`);
      for (const n of s.nodeErrors) output.warn(`  node ${shown(n.nodeId)}${n.field ? ` input ${shown(n.field)}` : ''}: ${shown(n.reason)}`);
      if (!output.json) output.result(s.promptId);
      remembered = remember(ctx, store, c, workflow, path.resolve(file), s.promptId);
    };
    if (!opts.wait) {
      said(await c.submit(workflow, { partnerKey, signal: io.signal }));
      await remembered;
      if (output.json) output.document({ prompt_id: submitted!.promptId, status: 'queued', files: [] });
      return;
    }
    const view = ctx.progressView();
    try {
      const run = await submitAndWatch(c, workflow, { partnerKey, signal: io.signal, onSubmitted: said, onUpdate: (u) => view.update(u), outputDir: opts.out });
      view.stop();
      const key = await remembered;
      if (key) await store.update(key, { lastStatus: run.final.job.status }).catch(() => undefined);
      finish(ctx, run.submission.promptId, run.final.job, run.files.map((f) => f.path));
    } catch (e) {
      view.stop();
      await remembered;
      if (AbortError.is(e) && submitted) interruptedLine(ctx, submitted.promptId);
      throw e;
    }
  });
}

/**
 * Remembers an accepted prompt in the state store (its record's key), or says on stderr why it could not (the prompt
 * runs all the same).
 */
async function remember(ctx: CliContext, store: StateStore, c: V1Client, workflow: unknown, workflowFile: string, promptId: string): Promise<string | undefined> {
  try {
    return (await rememberPrompt(store, c, workflow, promptId, { workflowFile, client: 'cli', lastStatus: 'queued' })).idempotencyKey;
  } catch (err) {
    ctx.output.message(`could not remember prompt ${shown(promptId)} in the state dir: ${shown(err instanceof Error ? err.message : String(err))}`);
    return undefined;
  }
}

/**
 * `--api v1 status <prompt_id>`: `GET /api/job/{id}/status`; plain: `<prompt_id>  <status>[  <error_message>]`;
 * `--json`: `{prompt_id, status, error_message?}` (the server's own words). Exit 0 whatever the status.
 * @throws NotFoundError for an unknown prompt (exit 1); other ApiErrors.
 */
export async function v1Status(ctx: CliContext, promptId: string): Promise<void> {
  const { io, output } = ctx;
  await withV1(ctx, async (c) => {
    const s = await c.status(promptId, { signal: io.signal, onRetry: ctx.retryLine });
    if (output.json) output.document({ prompt_id: promptId, status: s.status, ...(s.error_message ? { error_message: s.error_message } : {}) });
    else output.result(`${shown(promptId)}  ${shown(s.status)}${s.error_message ? `  ${shown(s.error_message)}` : ''}`);
  });
}

/**
 * `--api v1 watch <prompt_id> [--out DIR]`: follows the prompt (socket, else polling: watchV1Job) to its end; stdout
 * the paths written; `--json` one `{prompt_id, status, files}`; exit 1 unless it succeeded. A remembered prompt's
 * record learns the final status.
 * @throws NotFoundError (unknown prompt); ApiErrors; AbortError on Ctrl-C.
 */
export async function v1Watch(ctx: CliContext, promptId: string, opts: { out?: string }): Promise<void> {
  const { io } = ctx;
  await withV1(ctx, async (c) => {
    const view = ctx.progressView();
    try {
      const final = await watchV1Job(c, promptId, { signal: io.signal, onUpdate: (u) => view.update(u) });
      view.stop();
      const store = ctx.store();
      const record = (await store.list().catch(() => [])).find((r) => r.jobId === promptId && r.baseUrl === c.http.baseUrl);
      if (record) await store.update(record.idempotencyKey, { lastStatus: final.job.status }).catch(() => undefined);
      const files = final.job.status === 'succeeded' && opts.out ? await c.downloadOutputs(final.job, opts.out, { signal: io.signal }) : [];
      finish(ctx, promptId, final.job, files.map((f) => f.path));
    } catch (e) {
      view.stop();
      if (AbortError.is(e)) interruptedLine(ctx, promptId);
      throw e;
    }
  });
}

/**
 * `--api v1 object-info [--class C]`: the node definitions; plain: one line per class, `class_type  display name
 * category` (two spaces between); `--json` the map as the server gave it (filtered to C with `--class`).
 * An unknown `--class`: nothing printed and exit 1.
 */
export async function v1ObjectInfo(ctx: CliContext, opts: { class?: string }): Promise<void> {
  const { io, output } = ctx;
  await withV1(ctx, async (c) => {
    const info = await c.objectInfo(opts.class, { signal: io.signal });
    if (opts.class !== undefined && !Object.prototype.hasOwnProperty.call(info, opts.class)) {
      output.warn(`no node class ${shown(opts.class)} on this server`);
      ctx.setExitCode(1);
    }
    if (output.json) {
      output.document(info);
      return;
    }
    for (const [name, def] of Object.entries(info)) {
      output.result(`${shown(name)}  ${shown(def.display_name ?? def.name ?? name)}  ${shown(def.category ?? '')}`);
    }
  });
}

/** Options of `--api v1 upload`. */
export interface V1UploadCliOptions {
  type?: string;
  overwrite?: boolean;
  mask?: boolean;
  originalRef?: string;
}

/**
 * `--api v1 upload <file> [--type input|temp] [--overwrite]`, or with `--mask --original-ref JSON` a mask upload
 * (`POST /api/upload/mask`). stdout: the name to use in a workflow (`subfolder/name` when in a subfolder); `--json`
 * the server's `{name, subfolder, type}`.
 * @throws UsageError before any request: a `--type` other than input|temp, `--mask` without `--original-ref`,
 *   `--original-ref` not a JSON object with a string `filename`, or without `--mask`; InputError for an unreadable
 *   file; ApiErrors.
 */
export async function v1Upload(ctx: CliContext, file: string, opts: V1UploadCliOptions): Promise<void> {
  const { io, output } = ctx;
  const type = opts.type ?? 'input';
  if (type !== 'input' && type !== 'temp') throw new UsageError(`--type must be input or temp (got ${shown(type)})`);
  if (opts.originalRef !== undefined && !opts.mask) throw new UsageError('--original-ref goes with --mask');
  let ref: FileRef | undefined;
  if (opts.mask) {
    if (opts.originalRef === undefined) throw new UsageError('--mask needs --original-ref \'{"filename":"…","subfolder":"","type":"input"}\' (the image it masks)');
    ref = parseRef(opts.originalRef);
    if (opts.overwrite) throw new UsageError('--overwrite does not go with --mask');
  }
  // A missing file is bad input, said before any request (the client's own check happens after the client is built).
  if (!fs.statSync(file, { throwIfNoEntry: false })?.isFile()) throw new UsageError(`not a readable file: ${shown(file)}`);
  await withV1(ctx, async (c) => {
    const up = ref ? await c.uploadMask(file, ref, { type, signal: io.signal }) : await c.uploadImage(file, { type, overwrite: Boolean(opts.overwrite), signal: io.signal });
    output.message(`uploaded ${shown(file)} as ${shown(up.name)}`);
    if (output.json) output.document(up);
    else output.result(up.subfolder ? `${up.subfolder}/${up.name}` : up.name);
  });
}

/** The `--original-ref` JSON: an object with a non-empty string `filename`, optional `subfolder` and `type`. */
function parseRef(text: string): FileRef {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new UsageError('--original-ref must be JSON, e.g. \'{"filename":"photo.png","subfolder":"","type":"input"}\'');
  }
  const o = v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  if (!o || typeof o.filename !== 'string' || !o.filename) throw new UsageError('--original-ref must be a JSON object with a string "filename"');
  if (o.subfolder !== undefined && typeof o.subfolder !== 'string') throw new UsageError('--original-ref "subfolder" must be a string');
  if (o.type !== undefined && typeof o.type !== 'string') throw new UsageError('--original-ref "type" must be a string');
  return { filename: o.filename, subfolder: (o.subfolder as string | undefined) ?? '', type: (o.type as string | undefined) ?? 'input' };
}

/** Says the outcome (stderr), prints the result (stdout), sets exit code 1 unless the job succeeded. */
function finish(ctx: CliContext, promptId: string, job: Job, files: string[]): void {
  const { output } = ctx;
  for (const f of files) output.message(`saved ${f}`);
  const failure = job.error?.message ? `: ${shown(job.error.message)}${job.error.nodeId ? ` (node ${shown(job.error.nodeId)})` : ''}` : '';
  (job.status === 'succeeded' ? output.message : output.warn).call(output, `prompt ${shown(promptId)} ${shown(job.status)}${failure}`);
  if (output.json) output.document({ prompt_id: promptId, status: job.status, files });
  else for (const f of files) output.result(f);
  if (job.status !== 'succeeded') ctx.setExitCode(1);
}

/** The truthful line on Ctrl-C: the prompt keeps running on the server. */
function interruptedLine(ctx: CliContext, promptId: string): void {
  ctx.output.warn(`interrupted: prompt ${shown(promptId)} keeps running on the server (watch it with: comfy-cloud --api v1 watch ${shown(promptId)})`);
}

/** Runs `fn` with a v1 client, closed afterwards. */
async function withV1(ctx: CliContext, fn: (c: V1Client) => Promise<void>): Promise<void> {
  const c = await ctx.v1Client();
  try {
    await fn(c);
  } finally {
    await c.close();
  }
}
