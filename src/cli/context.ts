/**
 * What every command of the CLI shares, built once per run by {@link createContext} (cli.ts): the streams, the
 * {@link Output}, the Redactor, the client factory that reads the global options, the remembered-jobs store, the
 * progress view and the exit code. A command module receives it with the program it registers on, and never builds
 * its own client.
 */
import type { Command } from 'commander';
import type { V2Client } from '../core/backends';
import * as path from 'node:path';
import { createBackend, headlessJobService } from '../core/backends';
import { CONNECTION_APIS, type ConnectionApi } from '../core/connection/connections';
import { HashCache, StateStore, defaultStateDir } from '../core/state';
import {
  DEFAULT_DEPLOYMENT_DOMAIN,
  deploymentBaseUrl,
  discoverCompanion,
  legacyDeploymentAddress,
} from '../core/connection';
import { userAgent, type Redactor } from '../core/util';
import type { ClientLease, Clock, Connection, JobService } from '../core';
import { RouterClient, RouterService, fileKeyStore } from '../core/router';
import { Exit, UsageError, shown, type Output } from './output';
import { BarProgress, LineProgress, type ProgressView } from './progressView';

/** Where the CLI reads and writes; `process` in the real command, buffers in tests. */
export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /** Aborts the running command (Ctrl-C). */
  signal?: AbortSignal;
  /**
   * Starts the emulator for `comfy-cloud emulator` (injected so the core CLI stays small in tests). `v1.wsUrl` is the
   * deprecated v1 API's WebSocket (Cloud API v1 (deprecated), Events), absent where the emulator serves no v1 surface.
   */
  startEmulator?: (options: EmulatorCliOptions) => Promise<{
    baseUrl: string;
    routerUrl?: string;
    comfyuiUrl?: string;
    v1?: { wsUrl: string };
    close(): Promise<void>;
  }>;
  /** The clock of waits the router client makes (collecting a generation, retries); default the system clock. Tests inject one. */
  clock?: Clock;
}

/** Options of `comfy-cloud emulator`. */
export interface EmulatorCliOptions {
  host: string;
  port: number;
  tokens: string[];
  mountPrefix?: string;
  /** Serve serverless deployments on hosts `<id>.<deploymentDomain>` (the emulator's option of that name). */
  deploymentDomain?: string;
  nodeDelayMs: number;
  concurrency: number;
  dataDir?: string;
  /** `expires_at` = `created_at` + this, in ms (`--retention-ms`). */
  retentionMs: number;
  signedUrls: boolean;
  /** Fault specs (`--fault`), read by the emulator's parseFaultSpec. */
  faults: string[];
  control: boolean;
  /** The model router's options (`--router-key`, repeatable): the keys it accepts; none given: its default test key. */
  router?: { keys: string[] };
  /**
   * The deprecated v1 surface's options (Cloud API v1 (deprecated)): the status vocabulary it answers with
   * (`--v1-status-vocabulary`: `document` says `completed`, `public` says `success`), and whether it serves
   * `GET /api/jobs/{id}` (`--no-v1-jobs-endpoint`: 404, so clients fall back to `/api/history_v2/{id}`).
   */
  v1?: { statusVocabulary: 'document' | 'public'; jobsEndpoint: boolean };
  /**
   * Owned by an editor's windows (`--owner-grace-ms`, the token from `$COMFY_EMULATOR_OWNER_TOKEN`; the emulator's
   * owners.ts): `onRelease` is called when no window held it for `graceMs` (ms) or one asked it to stop.
   */
  owner?: { token: string; graceMs: number; onRelease(reason: 'orphaned' | 'stop'): void };
}

/** The global options (cli.ts), as commander gives them: strings, read only once parsed. */
export interface GlobalOptions {
  baseUrl?: string;
  /** `--deployment`: a serverless deployment's id (else env COMFY_DEPLOYMENT). */
  deployment?: string;
  /** `--deployment-domain`: the domain deployments are hosts under (else env COMFY_DEPLOYMENT_DOMAIN, else run.comfy.app). */
  deploymentDomain?: string;
  apiKey?: string;
  /** ms, as typed; checked by {@link CliContext.client}. */
  timeout: string;
  json?: boolean;
  quiet?: boolean;
  /** The model router's base URL (`--router-url`, else env COMFY_ROUTER_URL). */
  routerUrl?: string;
  /** Every `--router-key` given, in order: a client sends the last (else env COMFY_ROUTER_KEY), to the router's origin only; `emulator` accepts each. */
  routerKey: string[];
  /** `--api`: an API a connection may speak (checked by {@link CliContext.api}). */
  api?: string;
}

/**
 * The connection of a run, as its job service holds it: the job backend of the API the global options name, and the
 * client of its assets where that API has them (`backend.capabilities.assets`; the backend's own client).
 */
export interface CliConnection extends Connection {
  readonly assets: V2Client | undefined;
}

/** What a command may say about the backend it is the first to ask for (the run builds one, from its first ask). */
export interface BackendOptions {
  /** `--settle` (ms): the settle window of an unknown outcome's resolution; default the core's (3 s). */
  settleMs?: number;
  /** `--outage-budget` (ms): how long a watch may go on failing transiently. */
  outageBudgetMs?: number;
  /** `--partner-key` (else $COMFY_PARTNER_KEY), where the API takes one with every submission. */
  partnerKey?: string;
}

/** The run's job service and a lease on its one connection (see {@link CliContext.jobs}). */
export interface CliJobs {
  readonly service: JobService<CliConnection>;
  readonly lease: ClientLease<CliConnection>;
}

/** The shared context of one CLI run (see the module comment). */
export interface CliContext {
  readonly io: CliIo;
  readonly output: Output;
  /** Holds the user's API key (env and `--api-key`): nothing printed contains it. */
  readonly redactor: Redactor;
  /**
   * Which API the connection speaks, as the backend factory takes it: `--api`, else $COMFY_API, else `v2`.
   * @throws UsageError for any other value than the factory's (exit 2, before any request).
   */
  api(): ConnectionApi;
  /**
   * The configured server and key, as the run's backend reads them (global options, then the environment): for a request
   * that is no client's, such as the node definitions' `GET /api/object_info`.
   */
  server(): Promise<{ baseUrl: string; apiKey: string | undefined }>;
  /**
   * The run's headless job service (core/jobs/jobService.ts: one watch per job, whoever follows it) over the connection
   * the global options name (base URL, `--api`, key, `--timeout`; core/backends `createBackend`), and a lease on it:
   * every command follows, cancels and lists jobs through `lease.backend`, and asks its `capabilities` what the API
   * can do. Built at the first call (with that call's `options`), the same afterwards; closed by {@link close}.
   * @throws UsageError for a bad `--api`, `--timeout` or base URL (before any request).
   */
  jobs(options?: BackendOptions): Promise<CliJobs>;
  /**
   * Runs `fn` with the run's one model router client (core routerService.ts: built at the first call, reused by the
   * next; closed by {@link close}): base URL from `--router-url` / $COMFY_ROUTER_URL, key from `--router-key` /
   * $COMFY_ROUTER_KEY; schema cache in `<state dir>/router-schemas`, Idempotency-Keys persisted in `<state dir>/router-keys`.
   * @throws UsageError when no router URL is configured, it is not http(s), or `--timeout` is bad (before any request); as `fn`.
   */
  withRouter<T>(fn: (c: RouterClient) => Promise<T>): Promise<T>;
  /** Releases what the run holds (the job service and its backend, the model router client); runCli calls it once the command ended. Never rejects. */
  close(): Promise<void>;
  /** The remembered-jobs store shared with the extension ($COMFY_CLOUD_STATE_DIR, else the XDG state folder). */
  store(): StateStore;
  /** Progress on stderr: a bar on a terminal, lines otherwise, nothing with `--quiet`. */
  progressView(): ProgressView;
  /** Says on stderr that a request is retried and in how many seconds (an `onRetry`/`onWait` callback). */
  retryLine(r: { reason: string; delayMs: number }): void;
  /** Sets the exit code returned once the command ends normally (a thrown error decides its own). */
  setExitCode(code: number): void;
  /** The exit code set so far ({@link Exit.ok} unless a command set another). */
  readonly exitCode: number;
}

/**
 * Builds the context of one run of `program`. Global options are read lazily (they are known only once parsed).
 */
export function createContext(program: Command, io: CliIo, output: Output, redactor: Redactor): CliContext {
  let exitCode: number = Exit.ok;
  const globals = (): GlobalOptions => program.opts<GlobalOptions>();

  /**
   * The base URL. With --deployment ID (or $COMFY_DEPLOYMENT): the deployment's own host, `https://ID.run.comfy.app`,
   * under --deployment-domain / $COMFY_DEPLOYMENT_DOMAIN when given (core `deploymentBaseUrl`, the function the
   * extension uses too; Job and Asset API v2, What the service does: the id is a DNS-safe subdomain label); a base URL
   * given as well is not used, and a note says so (an earlier version put the deployment under it, at
   * `/deployment/ID`, an address the public contract does not have). Else --base-url, else $COMFY_BASE_URL, else a
   * running self-hosted companion found from its state file (where the companion writes it when run in the
   * background), else the companion's default address; the old form `https://cloud.comfy.org/deployment/ID` is moved
   * to the deployment's own host, with a note. Notes go to stderr once per run (never silenced: requests go elsewhere
   * than written).
   */
  let noted = false;
  const note = (text: string): void => {
    if (!noted) output.warn(`note: ${text}`);
    noted = true;
  };
  const baseUrl = async (): Promise<string> => {
    const g = globals();
    const domain = g.deploymentDomain || io.env.COMFY_DEPLOYMENT_DOMAIN || DEFAULT_DEPLOYMENT_DOMAIN;
    const given = g.baseUrl || io.env.COMFY_BASE_URL;
    const deployment = g.deployment || io.env.COMFY_DEPLOYMENT;
    if (deployment) {
      const url = deploymentBaseUrl(deployment, domain);
      if (given)
        note(
          `a deployment has a host of its own: requests go to ${url}; the base URL ${given} is not used (an earlier version sent them to ${given.replace(/\/+$/, '')}/deployment/${deployment}). To reach a gateway that mounts a deployment under a path, give that whole URL as --base-url, without --deployment.`,
        );
      return url;
    }
    const base = given || (await discoverCompanion(io.env))?.url || 'http://127.0.0.1:8189';
    const legacy = legacyDeploymentAddress(base, domain);
    if (!legacy) return base;
    note(
      `${legacy.before} is not an address of the public service: a deployment has a host of its own; requests go to ${legacy.now} (--deployment ${legacy.deploymentId} says the same).`,
    );
    return legacy.now;
  };
  const timeout = (): number => {
    const g = globals();
    const timeoutMs = Number(g.timeout);
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
      throw new UsageError(`--timeout must be a positive number of ms (got ${g.timeout})`);
    return timeoutMs;
  };
  const router = new RouterService({
    target: () => {
      const g = globals();
      const baseUrl = g.routerUrl || io.env.COMFY_ROUTER_URL;
      if (!baseUrl)
        throw new UsageError(
          'no model router configured: pass --router-url URL or set COMFY_ROUTER_URL (the emulator prints its router URL on its second line)',
        );
      return { baseUrl, apiKey: g.routerKey.at(-1) || io.env.COMFY_ROUTER_KEY || undefined };
    },
    create: (target) => {
      const stateDir = defaultStateDir(io.env);
      const timeoutMs = timeout();
      try {
        return new RouterClient({
          ...target,
          timeoutMs,
          clock: io.clock,
          schemaCacheDir: path.join(stateDir, 'router-schemas'),
          keyStore: fileKeyStore(path.join(stateDir, 'router-keys')),
        });
      } catch (e) {
        // A router URL that is not http(s): bad usage, said before any request.
        throw new UsageError(`--router-url / COMFY_ROUTER_URL: ${e instanceof Error ? e.message : String(e)}`);
      }
    },
  });
  const api = (): ConnectionApi => {
    const value = globals().api || io.env.COMFY_API || 'v2';
    // The APIs a connection may speak (core/connection): the backend factory builds each.
    if (!(CONNECTION_APIS as readonly string[]).includes(value))
      throw new UsageError(`--api / COMFY_API must be one of ${CONNECTION_APIS.join(', ')} (got ${shown(value)})`);
    return value as ConnectionApi;
  };
  let jobs: Promise<CliJobs> | undefined;
  let service: JobService<CliConnection> | undefined;
  const buildJobs = async (options: BackendOptions): Promise<CliJobs> => {
    const g = globals();
    const timeoutMs = timeout();
    const which = api();
    const surface = { baseUrl: await baseUrl() };
    // A base URL that is not http(s): InputError `bad_base_url` (exit 2, before any request), as the transport says it.
    const built = createBackend({
      surface,
      api: which,
      apiKey: g.apiKey || io.env.COMFY_API_KEY || undefined,
      userAgent: userAgent('cli'),
      timeoutMs,
      settleMs: options.settleMs,
      outageBudgetMs: options.outageBudgetMs,
      partnerKey: options.partnerKey,
      // The upload hash cache lives in the state dir, shared with the extension: an unchanged file is hashed once.
      hashCache: new HashCache(defaultStateDir(io.env)),
      // What this client did to a job where the server keeps no trace of it (comfyui: a prompt removed from the queue).
      store: new StateStore(defaultStateDir(io.env)),
    });
    // A note the backend's API asks a face to say (e.g. that it is deprecated), once per run, with the CLI's way on.
    if (built.backend.notice)
      output.message(
        `note: ${built.backend.notice}; move to it by dropping --api ${built.backend.api} (unset COMFY_API)`,
      );
    const connection: CliConnection = { backend: built.backend, assets: built.assets };
    service = headlessJobService(() => connection, {
      store: new StateStore(defaultStateDir(io.env)),
      clientName: 'cli',
      log: { info: () => undefined, warn: (_component, message) => output.message(message) },
    });
    return { service, lease: await service.lease() };
  };

  return {
    io,
    output,
    redactor,
    api,
    jobs: (options = {}) => (jobs ??= buildJobs(options)),
    server: async () => ({ baseUrl: await baseUrl(), apiKey: globals().apiKey || io.env.COMFY_API_KEY || undefined }),
    withRouter: (fn) => router.use(fn),
    close: async () => {
      // Disposing the service stops its watches and closes the connection's backend (and so its asset client).
      service?.dispose();
      await router.close();
    },
    store: () => new StateStore(defaultStateDir(io.env)),
    progressView: () =>
      globals().quiet
        ? { update: () => undefined, stop: () => undefined }
        : io.stderr.isTTY
          ? new BarProgress(io.stderr)
          : new LineProgress((line) => output.message(line)),
    retryLine: (r) => output.message(`${shown(r.reason)}: retrying in ${Math.ceil(r.delayMs / 1000)} s…`),
    setExitCode(code) {
      exitCode = code;
    },
    get exitCode() {
      return exitCode;
    },
  };
}
