/**
 * `comfy-cloud emulator`: runs the local emulator of the job service until Ctrl-C; prints its base URL first on
 * stdout, then the model router's base URL (`<origin>/router`) on the second line. The deprecated v1 API shares the
 * base URL; its WebSocket URL is said on stderr (stdout keeps its two result lines).
 *
 * Rules:
 * - the emulator is injected (`CliIo.startEmulator`, main.ts), so a build without it says so (exit 2);
 * - numeric options are checked (`--port` 0–65535, `--node-delay-ms` 0–3 600 000, `--concurrency` 1–64,
 *   `--retention-ms` 1 ms–30 days; exit 2);
 * - a non-loopback `--host` is warned about: the emulator is then reachable from the network, and its tokens are
 *   for tests only;
 * - the global `--deployment-domain <host>` makes it serve serverless deployments on hosts of their own,
 *   `http://<id>.<host>:<port>` (reached by `--deployment <id> --deployment-domain <host>:<port>`; a `localhost` host
 *   resolves to loopback);
 * - `--data-dir DIR` keeps the emulator's records in DIR across restarts (the emulator's persistence.ts: a job queued
 *   at the stop runs again, one running ends `failed`); a damaged `state.json` there is moved aside with a warning on
 *   stderr;
 * - `--owner-grace-ms MS` makes it an editor's (the emulator's owners.ts): the windows holding it with the token of
 *   `$COMFY_EMULATOR_OWNER_TOKEN` (required then; the environment keeps it out of the process list), it stops MS after
 *   the last one let go, or when one asks; its stdout and stderr may then outlive their reader (a window reloaded), so
 *   a broken pipe is not a failure;
 * - options the emulator refuses (a fault spec it cannot read, a bad prefix, a data folder written by a newer
 *   emulator: a TypeError), a port in use and an address not of this machine are bad usage (exit 2), each saying what
 *   to do.
 */
import type { Command } from 'commander';
import type { CliContext, GlobalOptions } from '../context';
import { collect, intOption } from '../options';
import { UsageError } from '../output';
import { EMULATOR_OWNER_TOKEN_ENV } from '../../core/connection';

/**
 * What `--fault` does to a submission, by outcome (Job and Asset API v2, POST /api/v2/jobs, rules 3–5 and 7): the
 * Idempotency-Key is claimed, kept or released as the contract says.
 */
const SUBMIT_FAULTS_HELP = [
  'Faults on submit (POST /api/v2/jobs), by outcome:',
  '  submit:status=queue_full, submit:status=insufficient_credits, submit:status=invalid_workflow',
  '      refused: no job, the Idempotency-Key released (the same key can be sent again)',
  '  submit:status=500, submit:status=upstream_unreachable (503), submit:reset',
  '      unknown outcome without a job: nothing created, the key stays claimed (sent again: 422 idempotency_key_reuse)',
  '  submit:status=502:claims=false, submit:reset:claims=false',
  '      a proxy failed before the request reached submission: no job, no claim',
  '  submit:afterCreate=502, submit:afterCreate=reset, submit:afterCreate=201:delay=40000',
  '      unknown outcome with a job: created and queued, the answer lost or late; the key stays claimed',
  '  submit:lag=5000:get=1000',
  '      created, but the listing omits the job for 5000 ms and its GET, /events and /workflow answer 404 for 1000 ms',
].join('\n');

/** The longest `--retention-ms`: 30 days, in ms. */
const MAX_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

interface EmulatorOptions {
  host: string;
  port: string;
  token: string[];
  mountPrefix?: string;
  nodeDelayMs: string;
  concurrency: string;
  dataDir?: string;
  retentionMs: string;
  signedUrls?: boolean;
  fault: string[];
  control?: boolean;
  v1StatusVocabulary: string;
  /** commander's `--no-v1-jobs-endpoint`: false when given. */
  v1JobsEndpoint: boolean;
  ownerGraceMs?: string;
}

/** Registers `emulator` on `program`; returns the command. */
export function register(program: Command, ctx: CliContext): Command {
  const { io, output } = ctx;
  return program
    .command('emulator')
    .description('run the local emulator of the job service (prints its base URL first)')
    .option('--host <host>', 'address to bind (loopback; anything else is reachable from the network)', '127.0.0.1')
    .option('--port <n>', 'port (0: a free one)', '8189')
    .option('--token <token>', 'require this bearer token (repeatable; each is its own owner)', collect, [] as string[])
    .option('--mount-prefix <path>', 'serve only under this path, as a serverless deployment (e.g. /deployment/demo)')
    .option('--node-delay-ms <ms>', 'delay per executed node', '0')
    .option('--concurrency <n>', 'jobs running at once', '1')
    .option(
      '--data-dir <dir>',
      'keep jobs, outputs, assets and Idempotency-Key claims in this folder across restarts (default: in memory, gone on exit)',
    )
    .option(
      '--retention-ms <ms>',
      'how long a job and its outputs are kept after it was created (expires_at), in ms',
      String(60 * 60 * 1000),
    )
    .option(
      '--signed-urls',
      'answer asset content with a 302 to a signed URL on a second loopback origin (as the cloud does)',
    )
    .option(
      '--fault <spec>',
      'inject a fault, e.g. get:status=500:every=3, events:dropAfter=2, content:cutAfter=100000 (repeatable); on submit, see below',
      collect,
      [] as string[],
    )
    .option(
      '--control',
      'serve the control endpoints: GET|POST /__emulator/faults (the fault plan) and GET|POST|DELETE /__emulator/holds, POST /__emulator/holds/release (nodes held until released)',
    )
    .option(
      '--v1-status-vocabulary <vocabulary>',
      'the deprecated v1 status words: document (completed) or public (success)',
      'document',
    )
    .option(
      '--no-v1-jobs-endpoint',
      'the deprecated v1 GET /api/jobs/{id} answers 404 (clients fall back to /api/history_v2/{id})',
    )
    .option(
      '--owner-grace-ms <ms>',
      `owned by editor windows (the token in $${EMULATOR_OWNER_TOKEN_ENV}): stop this long after the last one let go`,
    )
    .addHelpText('after', `\n${SUBMIT_FAULTS_HELP}`)
    .addHelpText(
      'after',
      '\nThe global --router-key <key> (repeatable) sets the keys the model router accepts (default: test-router-key).\nThe global --deployment-domain <host> (e.g. localhost) serves serverless deployments on hosts of their own, http://<id>.<host>:<port>, as the public service does (https://<id>.run.comfy.app); a request to any other host answers 404.',
    )
    .action(async (opts: EmulatorOptions) => {
      const routerKeys = program.opts<GlobalOptions>().routerKey;
      // The option only, never $COMFY_DEPLOYMENT_DOMAIN: that one tells clients where deployments are.
      const deploymentDomain = program.opts<GlobalOptions>().deploymentDomain;
      if (!io.startEmulator) throw new UsageError('the emulator is not available in this build');
      const port = intOption('--port', opts.port, 0, 65535);
      const vocabulary = opts.v1StatusVocabulary;
      if (vocabulary !== 'document' && vocabulary !== 'public')
        throw new UsageError(`--v1-status-vocabulary must be document or public, not ${JSON.stringify(vocabulary)}`);
      if (!isLoopback(opts.host)) {
        output.warn(
          `warning: --host ${opts.host} is not a loopback address: the emulator is reachable from the network, and it has no real authentication (tokens are for tests only)`,
        );
      }
      let release: (reason: 'orphaned' | 'stop') => void = () => undefined;
      const released = new Promise<'orphaned' | 'stop'>((resolve) => (release = resolve));
      let owner: { token: string; graceMs: number; onRelease: typeof release } | undefined;
      if (opts.ownerGraceMs !== undefined) {
        const token = io.env[EMULATOR_OWNER_TOKEN_ENV] ?? '';
        if (token.length < 16)
          throw new UsageError(
            `--owner-grace-ms needs the owner token (16 characters or more) in $${EMULATOR_OWNER_TOKEN_ENV}; set it, or leave out --owner-grace-ms`,
          );
        owner = { token, graceMs: intOption('--owner-grace-ms', opts.ownerGraceMs, 1, 3_600_000), onRelease: release };
        // The window that started it may be gone (reloaded): its pipes then break, and that is no failure.
        for (const stream of [io.stdout, io.stderr]) stream.on('error', () => undefined);
      }
      const emulator = await io
        .startEmulator({
          host: opts.host,
          port,
          tokens: opts.token,
          mountPrefix: opts.mountPrefix,
          deploymentDomain,
          nodeDelayMs: intOption('--node-delay-ms', opts.nodeDelayMs, 0, 3_600_000),
          concurrency: intOption('--concurrency', opts.concurrency, 1, 64),
          dataDir: opts.dataDir,
          retentionMs: intOption('--retention-ms', opts.retentionMs, 1, MAX_RETENTION_MS),
          signedUrls: Boolean(opts.signedUrls),
          faults: opts.fault,
          control: Boolean(opts.control),
          router: routerKeys.length ? { keys: routerKeys } : undefined,
          v1: { statusVocabulary: vocabulary, jobsEndpoint: opts.v1JobsEndpoint },
          owner,
        })
        .catch((e: unknown) => {
          // The emulator refuses bad options (a fault spec it cannot read, a bad prefix) with a TypeError.
          if (e instanceof TypeError) throw new UsageError(e.message);
          const code = (e as NodeJS.ErrnoException).code;
          if (code === 'EADDRINUSE')
            throw new UsageError(
              `port ${port} on ${opts.host} is in use (another emulator or companion?); choose another with --port N, or --port 0 for a free one`,
            );
          if (code === 'EADDRNOTAVAIL')
            throw new UsageError(`${opts.host} is not an address of this machine; use --host 127.0.0.1`);
          throw e;
        });
      output.result(emulator.baseUrl);
      // The model router on the same origin: its base URL on the second line.
      const routerUrl = emulator.routerUrl;
      if (typeof routerUrl === 'string') output.result(routerUrl);
      output.message(`emulator listening on ${emulator.baseUrl} (Ctrl-C to stop)`);
      if (deploymentDomain !== undefined) {
        const port = new URL(emulator.baseUrl).port;
        output.message(
          `serverless deployments at http://<id>.${deploymentDomain}:${port} (clients: --deployment <id> --deployment-domain ${deploymentDomain}:${port})`,
        );
      }
      if (typeof routerUrl === 'string')
        output.message(
          `model router on ${routerUrl} (it accepts the router key${routerKeys.length > 1 ? 's' : ''} ${routerKeys.length ? routerKeys.join(', ') : 'test-router-key'})`,
        );
      // The deprecated v1 API shares the base URL; its WebSocket is the one new address.
      const wsUrl = emulator.v1?.wsUrl;
      if (wsUrl !== undefined)
        output.message(
          `deprecated v1 API on ${emulator.baseUrl}/api/… (X-API-Key), its WebSocket at ${wsUrl}?clientId=<uuid>&token=<key>`,
        );
      // A ComfyUI server's native API under /comfyui (ComfyUI server API (observed)): no key.
      const comfyuiUrl = emulator.comfyuiUrl;
      if (typeof comfyuiUrl === 'string')
        output.message(
          `ComfyUI server API on ${comfyuiUrl} (no key; clients: --api comfyui --base-url ${comfyuiUrl}), its WebSocket at ${comfyuiUrl.replace(/^http/, 'ws')}/ws?clientId=<id>`,
        );
      const reason = await Promise.race([
        released,
        new Promise<'signal'>((resolve) => {
          if (io.signal?.aborted) resolve('signal');
          io.signal?.addEventListener('abort', () => resolve('signal'), { once: true });
        }),
      ]);
      await emulator.close();
      output.message(
        reason === 'orphaned'
          ? `emulator stopped: no window held it for ${owner?.graceMs} ms`
          : reason === 'stop'
            ? 'emulator stopped: its owner asked'
            : 'emulator stopped',
      );
    });
}

/** True for a loopback host: 127.0.0.0/8, ::1, localhost. */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}
