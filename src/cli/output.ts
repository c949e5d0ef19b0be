/**
 * What the CLI prints, in one place (what reaches a terminal, a log or a message is clean):
 * - stdout carries results only (a job id, a written path, a JSON document); stderr everything else; `--quiet`
 *   silences messages, never results nor errors;
 * - every line goes through the Redactor (the user's API key never printed, even when a server echoes it) and has
 *   control characters and escape sequences shown escaped; a server-chosen string put into a line goes through
 *   {@link shown} first, so it cannot even start a line of its own;
 * - with `--json`, an error is also one JSON document `{"error": {code, message, …}}` on stdout.
 */
import { ApiError, ComfyError, InvalidWorkflowError, OutcomeUnknownError } from '../core';
import { jsonForTerminal, neutralize, type Redactor } from '../core/util';
import { adviceFor, unknownClassesMessage } from '../core/views';
import { ConversionError } from '../core/convert/uiToApi';
import { RouterError, RouterOutcomeUnknownError, type CommittedSpend } from '../core/router';

/** Exit codes of the CLI. */
export const Exit = { ok: 0, failed: 1, usage: 2, interrupted: 130 } as const;

/** A refusal of bad usage (exit code 2), said before any request. */
export class UsageError extends Error {}

/** One server-chosen string as it may stand inside a line: every control character escaped, newlines too. */
export function shown(value: unknown): string {
  return neutralize(String(value ?? ''));
}

/** The streams and switches of one CLI run. */
export interface OutputOptions {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  redactor: Redactor;
  /** Read when a line is written: the global `--json` and `--quiet` are known only once parsed. */
  flags: () => { json?: boolean; quiet?: boolean };
}

/** Writes results, messages and errors of the CLI (see the module comment). */
export class Output {
  constructor(private readonly o: OutputOptions) {}

  get json(): boolean {
    return Boolean(this.o.flags().json);
  }

  /** True with `--quiet`: messages are silenced (a progress line drawn in place too). */
  get quiet(): boolean {
    return Boolean(this.o.flags().quiet);
  }

  /** A result line (or lines) on stdout: printed even with --quiet. */
  result(text: string): void {
    this.o.stdout.write(this.clean(text) + '\n');
  }

  /** A JSON result on stdout: one document, valid JSON, safe in a terminal, secrets redacted. */
  document(value: unknown): void {
    this.o.stdout.write(jsonForTerminal(value, this.o.redactor) + '\n');
  }

  /** A JSON result on stdout as one line (JSON Lines: a stream of results, one per line), like {@link document}. */
  jsonLine(value: unknown): void {
    this.o.stdout.write(jsonForTerminal(value, this.o.redactor, 0) + '\n');
  }

  /** A message on stderr; silenced by --quiet. */
  message(text: string): void {
    if (!this.o.flags().quiet) this.o.stderr.write(this.clean(text) + '\n');
  }

  /** A warning or error line on stderr; never silenced. */
  warn(text: string): void {
    this.o.stderr.write(this.clean(text) + '\n');
  }

  /** Reports `e` (stderr; with --json also `{"error": …}` on stdout) and returns the exit code it means. */
  error(e: unknown, code: number): number {
    this.warn(`error ${describe(e)}`);
    if (this.json) this.document({ error: errorDocument(e) });
    return code;
  }

  /** The catch-all: redacted, control characters shown escaped except the newlines between our own lines. */
  private clean(text: string): string {
    return this.o.redactor.clean(text, { keepNewlines: true });
  }
}

/** `[code] message (request-id …)`, with node errors listed for invalid_workflow and advice for the code. */
export function describe(e: unknown): string {
  if (e instanceof RouterError) return describeRouterError(e);
  if (e instanceof RouterOutcomeUnknownError)
    return `[${e.code}] ${shown(e.message)}${requestId(e)}\n  idempotency key: ${shown(e.idempotencyKey)}`;
  if (e instanceof InvalidWorkflowError) {
    // Node classes the server does not run: one sentence naming each class once, not a line per node.
    const unknownClasses = unknownClassesMessage(e);
    if (unknownClasses !== undefined) return `[${shown(e.code)}] ${shown(unknownClasses)}${requestId(e)}`;
    const lines = e.nodeErrors.map(
      (n) => `  node ${shown(n.nodeId)}${n.field ? ` input ${shown(n.field)}` : ''}: ${shown(n.reason)}`,
    );
    return `[${shown(e.code)}] ${shown(e.message)}${requestId(e)}${lines.length ? '\n' + lines.join('\n') : ''}`;
  }
  if (ApiError.is(e)) {
    const advice = adviceFor(e, 'cli');
    const retry = e.retryAfter !== undefined ? ` (Retry-After ${e.retryAfter} s)` : '';
    return `[${shown(e.code)}] HTTP ${e.status}: ${shown(e.message)}${retry}${advice ? ` — ${advice}` : ''}${requestId(e)}`;
  }
  if (OutcomeUnknownError.is(e))
    return `[${e.code}] ${shown(e.message)}\n  list remembered jobs with: comfy-cloud jobs`;
  if (e instanceof ConversionError) {
    // Its message is a first line, then one line per node that cannot be converted: each kept a line of its own.
    const [head, ...lines] = e.message.split('\n');
    return [
      `[${shown(e.code)}] ${shown(head)}`,
      ...lines.filter((l) => l.trim() !== '').map((l) => `  ${shown(l.trim())}`),
    ].join('\n');
  }
  if (ComfyError.is(e) && e.code === 'job_created_unreadable') {
    const jobId = (e as ComfyError & { jobId?: string }).jobId;
    return `[${e.code}] ${shown(e.message)}${requestId(e)}\n  ${jobId ? `the job is remembered; follow it with: comfy-cloud watch ${shown(jobId)}` : 'list remembered jobs with: comfy-cloud jobs'}`;
  }
  if (ComfyError.is(e) && e.code === 'file_exists' && !/--force/.test(e.message))
    return `[${e.code}] ${shown(e.message)} (pass --force to replace it)`;
  if (ComfyError.is(e)) return `[${shown(e.code)}] ${shown(e.message)}${requestId(e)}`;
  if (e instanceof UsageError) return shown(e.message);
  return shown(e instanceof Error ? e.message : String(e));
}

/** USD cents as dollars with two decimals (`1234` → `$12.34`: spend figures are shown in dollars). */
export function dollars(cents: number): string {
  return `${cents < 0 ? '-' : ''}$${(Math.abs(cents) / 100).toFixed(2)}`;
}

/**
 * A model router refusal (Model router API, Errors): `[bucket] HTTP status: detail (Retry-After) (request-id …)`, then
 * one line per 422 field (`  loc.path: msg (type)`), the committed spend of a 429 in dollars, the suggestions of a
 * `model_not_found`, and the Idempotency-Key of a failed invocation (to collect or retry with).
 */
function describeRouterError(e: RouterError): string {
  const retry = e.retryAfter !== undefined ? ` (Retry-After ${e.retryAfter} s)` : '';
  const reported = e.reportedBucket !== undefined ? ` (the router said ${shown(e.reportedBucket)})` : '';
  const head = `[${e.bucket}] HTTP ${e.status}${reported}: ${shown(e.fieldErrors.length ? 'the input is not valid for this model' : e.detail || e.message)}${retry}${requestId(e)}`;
  const lines = e.fieldErrors.map(
    (f) => `  ${shown(f.loc.map(String).join('.') || '(body)')}: ${shown(f.msg)} (${shown(f.type)})`,
  );
  const spend = spendText(e.spend);
  if (spend) lines.push(`  committed spend: ${spend}`);
  // Said once: a router whose detail already lists them is not repeated.
  if (e.suggestions.length && !e.suggestions.every((s) => e.detail.includes(s)))
    lines.push(`  did you mean: ${e.suggestions.map(shown).join(', ')}`);
  if (e.idempotencyKey !== undefined) lines.push(`  idempotency key: ${shown(e.idempotencyKey)}`);
  return [head, ...lines].join('\n');
}

function spendText(spend: CommittedSpend | undefined): string {
  if (!spend) return '';
  const parts: string[] = [];
  if (spend.currentCents !== undefined) parts.push(`${dollars(spend.currentCents)} in flight`);
  if (spend.limitCents !== undefined) parts.push(`limit ${dollars(spend.limitCents)}`);
  if (spend.remainingCents !== undefined) parts.push(`${dollars(spend.remainingCents)} remaining`);
  return parts.join(', ');
}

function requestId(e: ComfyError): string {
  return e.requestId ? ` (request-id ${shown(e.requestId)})` : '';
}

/** The `error` member of the JSON error document: the API's names (snake_case), only what is known. */
export function errorDocument(e: unknown): Record<string, unknown> {
  if (e instanceof UsageError) return { code: 'usage', message: e.message };
  if (!ComfyError.is(e)) return { code: 'error', message: e instanceof Error ? e.message : String(e) };
  const doc: Record<string, unknown> = { code: e.code, message: e.message };
  if (ApiError.is(e)) {
    doc.status = e.status;
    if (e.details) doc.details = e.details;
    if (e.retryAfter !== undefined) doc.retry_after = e.retryAfter;
  }
  if (e instanceof InvalidWorkflowError)
    doc.node_errors = e.nodeErrors.map((n) => ({ node_id: n.nodeId, field: n.field ?? null, reason: n.reason }));
  if (OutcomeUnknownError.is(e)) doc.idempotency_key = e.record.idempotencyKey;
  if (e instanceof ConversionError)
    doc.problems = e.problems.map((p) => ({
      node_id: p.nodeId,
      class_type: p.classType,
      title: p.title ?? null,
      reason: p.reason,
      fix: p.fix,
    }));
  if (e instanceof RouterError) {
    doc.bucket = e.bucket;
    doc.detail = e.detail;
    if (e.fieldErrors.length) doc.field_errors = e.fieldErrors.map((f) => ({ loc: f.loc, msg: f.msg, type: f.type }));
    if (e.spend)
      doc.committed_spend_usd = {
        limit: cents2(e.spend.limitCents),
        current: cents2(e.spend.currentCents),
        remaining: cents2(e.spend.remainingCents),
      };
    if (e.suggestions.length) doc.suggestions = e.suggestions;
    if (e.idempotencyKey !== undefined) doc.idempotency_key = e.idempotencyKey;
  }
  if (e instanceof RouterOutcomeUnknownError) doc.idempotency_key = e.idempotencyKey;
  const jobId = (e as { jobId?: unknown }).jobId;
  if (typeof jobId === 'string') doc.job_id = jobId;
  if (e.requestId) doc.request_id = e.requestId;
  const advice = ApiError.is(e) ? adviceFor(e, 'cli') : undefined;
  if (advice) doc.advice = advice;
  return doc;
}

/** Cents as a dollar amount with two decimals, as a string (JSON keeps `12.30`), or null when unknown. */
function cents2(cents: number | undefined): string | null {
  return cents === undefined ? null : (cents / 100).toFixed(2);
}
