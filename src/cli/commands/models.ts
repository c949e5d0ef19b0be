/**
 * `comfy-cloud models …`: the model router from the command line (Model router API). The router
 * is reached at the global `--router-url` / $COMFY_ROUTER_URL with `--router-key` / $COMFY_ROUTER_KEY (context.ts).
 *
 * - `models list [--limit N] [--cursor C] [--all] [--json]`: one page, one `id  billing` line per entry (the next
 *   cursor said on stderr); `--json` the page object; `--all` follows `next_cursor` while `has_more`, past short and
 *   empty pages, each entry once in the order served (`--json`: one JSON array).
 * - `models get <id> [--json]`: the model's detail (`--json`: the object as served, fields unknown to the client
 *   included, as `models list --json` prints the page and its entries).
 * - `models schema <id>`: the model's openapi.json on stdout, byte for byte as served, whether fresh, after a 304 or
 *   stale (the cached copy when the router fails; a warning on stderr, exit 0). Cached in `<state dir>/router-schemas`.
 * - `models run <id> <input.json> [--idempotency-key K] [--out FILE]`: POSTs the file's JSON with a top-level `$schema`
 *   removed (nothing else changed); the native output byte for byte on stdout, or in FILE (its path on stdout). On a
 *   504 without Retry-After (or an answer that never came) exit 1 with the key and the command that collects it.
 *
 * Every wait before a retry (`rate_limited` with Retry-After, `service_unavailable`) or before collecting a generation
 * (504 with Retry-After) prints one line on stderr, e.g. `rate_limited: retrying in 2 s (attempt 2)`.
 *
 * Exit codes: 0; 1 a router refusal (stderr: bucket, detail, request id; a 422 one line per field; spend in dollars);
 * 2 before any request for a malformed model id, cursor or `--limit`, or an input file missing or not JSON.
 */
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import type { Command } from 'commander';
import { InputError } from '../../core';
import { readInputFile } from '../../core/util/inputFile';
import {
  DeadlineExceededError,
  RouterError,
  RouterOutcomeUnknownError,
  billingOf,
  inputSchemaUrlOf,
  retryMessage,
  type RouterClient,
  checkCursor,
  parseModelId,
  removeTopLevelSchemaKey,
  type ModelEntry,
} from '../../core/router';
import type { CliContext } from '../context';
import { intOption } from '../options';
import { Exit, shown } from '../output';

interface ListOptions {
  limit?: string;
  cursor?: string;
  all?: boolean;
}

interface RunOptions {
  idempotencyKey?: string;
  out?: string;
}

/** Registers `models` and its subcommands on `program`; returns the `models` command. */
export function register(program: Command, ctx: CliContext): Command {
  const { io, output } = ctx;
  // One stderr line per retry or collect wait (a wait is never silent): `rate_limited: retrying in 2 s (attempt 2)`.
  const withRouter = <T>(fn: (router: RouterClient) => Promise<T>): Promise<T> =>
    ctx.withRouter(async (router) => {
      // The client is the run's shared one: the listener is this call's, removed when it ends.
      const stop = router.onRetry((info) => output.message(retryMessage(info)));
      try {
        return await fn(router);
      } finally {
        stop();
      }
    });
  const models = program
    .command('models')
    .description('the model router: list models, read one, its input schema, run it (needs --router-url)');

  models
    .command('list')
    .description('list the router catalog: one page, or every page with --all (one "id  billing" line per model)')
    .option('--limit <n>', 'page size asked for (above 100 the router serves 100; 0 or less: 20)')
    .option('--cursor <cursor>', 'the next_cursor of an earlier page')
    .option('--all', 'follow the cursor while the router says has_more (--json: one array of every entry)')
    .action(async (opts: ListOptions) => {
      // Checked before any request (exit 2).
      const limit = opts.limit !== undefined ? intOption('--limit', opts.limit, -1_000_000, 1_000_000) : undefined;
      if (opts.cursor !== undefined) checkCursor(opts.cursor);
      await withRouter(async (router) => {
        if (opts.all) {
          const entries: ModelEntry[] = [];
          let pages = 0;
          for await (const entry of router.models({ limit, signal: io.signal, onPage: () => pages++ })) {
            if (output.json) entries.push(entry);
            else output.result(entryLine(entry));
          }
          if (output.json) output.document(entries);
          output.message(`${pages} page(s) read`);
          return;
        }
        const page = await router.listModels({ cursor: opts.cursor, limit, signal: io.signal });
        if (output.json) {
          // The page as served: fields this client does not know are printed too (read tolerantly, keep the rest).
          output.document(page.body);
          return;
        }
        for (const entry of page.entries) output.result(entryLine(entry));
        if (page.hasMore && page.nextCursor !== undefined)
          output.message(`more models: comfy-cloud models list --cursor ${shown(page.nextCursor)}`);
        else if (page.hasMore) output.message('the router says there are more models but gave no cursor');
      });
    });

  models
    .command('get')
    .description("show one model's catalog entry and its input schema URL")
    .argument('<id>', 'model id: {provider}/{model}[/{variant}], lowercase')
    .action(async (id: string) => {
      parseModelId(id);
      await withRouter(async (router) => {
        const { model, requestId } = await router.getModel(id, { signal: io.signal });
        if (output.json) {
          output.document(model);
          return;
        }
        const schemaUrl = inputSchemaUrlOf(model);
        output.result(
          [
            `id: ${shown(model.id)}`,
            `provider: ${shown(model.provider)}`,
            `model: ${shown(model.model)}`,
            `charges on policy rejection: ${billingOf(model)}`,
            ...(schemaUrl !== undefined ? [`input schema: ${shown(schemaUrl)}`] : []),
          ].join('\n'),
        );
        if (requestId) output.message(`request-id ${shown(requestId)}`);
      });
    });

  models
    .command('schema')
    .description(
      "print the model's input schema (openapi.json) exactly as served; cached, revalidated with its ETag, and served stale (with a warning) when the router fails",
    )
    .argument('<id>', 'model id: {provider}/{model}[/{variant}], lowercase')
    .action(async (id: string) => {
      parseModelId(id);
      await withRouter(async (router) => {
        const schema = await router.getInputSchema(id, { signal: io.signal });
        if (schema.stale) {
          const when = schema.storedAt !== undefined ? ` stored ${new Date(schema.storedAt).toISOString()}` : '';
          output.warn(
            `warning: the router could not answer (${shown(schema.staleReason ?? 'unknown failure')}); this is the cached copy${when}, it may be out of date`,
          );
        }
        // Byte for byte: the document as served, not re-serialised nor escaped.
        io.stdout.write(schema.bytes);
      });
    });

  models
    .command('run')
    .description(
      "run a model: POST the input file's JSON (a top-level $schema removed) and print the model's native output exactly as received",
    )
    .argument('<id>', 'model id: {provider}/{model}[/{variant}], lowercase')
    .argument('<input>', "a JSON file: the model's native input")
    .option(
      '--idempotency-key <key>',
      'send this key (the key a timed-out run printed collects its result); default: a new one, saved before sending',
    )
    .option('--out <file>', 'write the output to this file (its path on stdout) instead of stdout')
    .action(async (id: string, file: string, opts: RunOptions) => {
      // Everything checked before any request (exit 2): the id, the file, its JSON.
      parseModelId(id);
      const text = await readInputFile(file);
      try {
        JSON.parse(text);
      } catch (e) {
        throw new InputError(
          'not_json',
          `${file} is not JSON (${e instanceof Error ? e.message : String(e)}); a model input is the model's native JSON object`,
        );
      }
      const body = removeTopLevelSchemaKey(text);
      await withRouter(async (router) => {
        let result;
        try {
          result = await router.run(id, body, { idempotencyKey: opts.idempotencyKey, signal: io.signal });
        } catch (e) {
          const key = e instanceof RouterError || e instanceof RouterOutcomeUnknownError ? e.idempotencyKey : undefined;
          if (key === undefined || !(e instanceof DeadlineExceededError || e instanceof RouterOutcomeUnknownError))
            throw e;
          // The generation may still run: say how to collect it with the SAME key (never a new one).
          ctx.setExitCode(output.error(e, Exit.failed));
          output.warn(
            `the model may still be running; collect its result with: comfy-cloud models run ${shown(id)} ${shown(file)} --idempotency-key ${shown(key)}`,
          );
          return;
        }
        if (opts.out !== undefined) {
          await writeFileAtomic(opts.out, result.bytes);
          output.result(opts.out);
        } else {
          // Byte for byte (Model router API, What the service does: forwarded unchanged): the native output as
          // received, not re-serialised nor escaped.
          io.stdout.write(result.bytes);
        }
        output.message(
          `done (${result.attempts} request(s), request-id ${shown(result.requestId ?? 'none')}, idempotency key ${shown(result.idempotencyKey)})`,
        );
      });
    });

  return models;
}

/**
 * One list line: `id  billing` (the billing note: does a policy rejection cost credits), two spaces apart (a tab
 * would be shown escaped: output.ts escapes control characters); an id has no spaces (its pattern).
 */
function entryLine(entry: ModelEntry): string {
  return `${shown(entry.id)}  ${billingOf(entry)}`;
}

/** Writes `bytes` to `file` through a temporary file renamed into place: never a half-written output. */
async function writeFileAtomic(file: string, bytes: Buffer): Promise<void> {
  const temp = `${file}.${randomUUID()}.tmp`;
  try {
    await fs.writeFile(temp, bytes);
    await fs.rename(temp, file);
  } catch (e) {
    await fs.rm(temp, { force: true });
    throw e;
  }
}
