/**
 * The local emulator of the Comfy job service (Job and Asset API v2): a real HTTP server that accepts
 * API-format workflows of weight-free nodes, really executes them and serves their PNG outputs; stores
 * uploaded assets as content-addressed blobs (streamed, blake3-deduplicated); and misbehaves on purpose
 * following a fault plan. Started in-process by tests and by `comfy-cloud emulator`.
 *
 * Surfaces: without options it is the self-hosted companion (loopback, port 8189, no auth, absolute links);
 * with `tokens` it requires a bearer token per owner; with `mountPrefix` it is a serverless deployment
 * (served only under the prefix, host-relative links, finished jobs' `logs`); with `deploymentDomain` it serves
 * serverless deployments on hosts of their own (`<id>.<domain>`, as the public service does); with `signedUrls` asset content answers with a 302 to
 * a signed URL on a second origin, as the managed cloud does.
 *
 * Layout: here what every API shares (the server, routing, authentication, the fault plan, node holds and their
 * control endpoint, error answers, blobs, ranges, signed URLs, the scheduler); `engine/` the weight-free graph engine (its
 * nodes and images, for v2 jobs and, next, v1 prompts); `v2/` the Job and Asset API (routes, stores, events,
 * idempotency, links, the wire shapes); `modelRouter/` the model router (Model router API), served on the same
 * origin under `/router` (its base URL {@link Emulator.routerUrl}), on by default; `v1/` the deprecated v1 API
 * (Cloud API v1 (deprecated)) and its WebSocket over the same engine, same origin and mount prefix, on by default;
 * `comfyui/` a ComfyUI server's native API under `/comfyui` ({@link Emulator.comfyuiUrl}), on by default.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { assetRoutes, signedContentRoute } from './v2/assetRoutes';
import { AssetStore } from './v2/assets';
import { createAuth, REJECT_CREDENTIALS } from './auth';
import { controlHandler, controlOf } from './control';
import { FaultInjector, type FaultLogEntry, type FaultPlan, type FaultState } from './faults';
import { NodeHolds, type HeldNode, type HoldPlan, type HoldState } from './holds';
import { IdempotencyKeys } from './v2/idempotency';
import { StateFile, type SavedJob, type SavedState } from './persistence';
import { validateWorkflow } from './engine/engine';
import { EmulatorError } from './errors';
import type { WireJobError } from './v2/wire';
import { jobRoutes } from './v2/jobRoutes';
import { JobStore } from './v2/jobs';
import { Links } from './v2/links';
import { Router, type RecordedRequest } from './router';
import { JobRunner } from './v2/runner';
import { createModelRouter, ROUTER_PREFIX, type CatalogEntry, type ModelRouterOptions } from './modelRouter';
import { createRequestListener, healthRoute, listen, originOf, stop } from './server';
import { UrlSigner } from './signing';
import { Owners, type OwnerOptions } from './owners';
import { createV1Surface, TappedEventHub, type V1Handle, type V1Options } from './v1';
import { createComfyUiSurface, type ComfyUiHandle, type ComfyUiOptions } from './comfyui';

export type { RecordedRequest } from './router';
export { parseFaultSpec, checkFaultPlan, ROUTE_KINDS } from './faults';
export type { FaultAction, FaultLogEntry, FaultPlan, FaultRule, FaultSchedule, FaultState, RouteKind } from './faults';
export { checkHoldPlan } from './holds';
export type { HeldNode, HoldPlan, HoldState } from './holds';
export { BUCKETS, BUCKET_STATUS, DEFAULT_LIMIT, MAX_LIMIT, ROUTER_PREFIX, TEST_ROUTER_KEY } from './modelRouter';
export type { Bucket, CatalogEntry, FieldError, ModelRouterOptions } from './modelRouter';
export { BINARY_EVENT, IMAGE_TYPE, previewImageFrame, previewWithMetadataFrame, textFrame } from './v1';
export type { PreviewMetadata, StatusVocabulary, V1Handle, V1Options, V1PromptRecord } from './v1';
export { COMFYUI_PREFIX, type ComfyUiHandle, type ComfyUiOptions } from './comfyui';
export { OWNER_PATH, type OwnerOptions, type ReleaseReason } from './owners';

/** How to start the emulator. Every field is optional. */
export interface EmulatorOptions {
  /** Address to bind (both origins); default '127.0.0.1'. */
  host?: string;
  /** Port; default 8189; 0 picks a free port. */
  port?: number;
  /**
   * When non-empty, every request needs `Authorization: Bearer <one of them>`, else 401 `unauthorized`; each
   * token is its own owner (another token's jobs and assets answer 404 `not_found`, its blobs 404
   * `blob_not_found`). Empty: no auth, one owner.
   */
  tokens?: string[];
  /**
   * E.g. '/deployment/dep-1': serve only under this prefix (other paths 404 `not_found`), with host-relative
   * `urls` that include it, and `logs` on GET of a finished job, as a serverless deployment. Without a prefix `urls`
   * are absolute and jobs never have `logs`.
   */
  mountPrefix?: string;
  /**
   * E.g. 'localhost': serve as serverless deployments on hosts of their own, as the public service does
   * (`https://{deployment}.run.comfy.app`, Job and Asset API v2 OpenAPI document, `servers`): a request is served only
   * when its Host is `<id>.<deploymentDomain>` (any port; the id a DNS label), else 404 `not_found`; links are
   * host-relative and finished jobs carry `logs`, as under a mount prefix. Every id reaches the same store. A client
   * reaches `http://<id>.localhost:<port>` by resolving names under `.localhost` to loopback (RFC 6761).
   * @throws TypeError (at start) when it is not a host name.
   */
  deploymentDomain?: string;
  /** Delay per executed node, in ms (default 0); cancel interrupts it. */
  nodeDelayMs?: number;
  /** Jobs running at once (default 1). */
  concurrency?: number;
  /** `expires_at` = `created_at` + this, in ms (default 1 hour); after it the job answers 404 and is dropped. */
  retentionMs?: number;
  /**
   * The data folder. Given: the emulator keeps its records there across restarts (persistence.ts): its jobs (status,
   * outputs, `expires_at`, workflow, error), its assets, blobs and Idempotency-Key claims are written to
   * `state.json` (atomically, after every change) and `blobs/` (named by their blake3 hex), and read back at start;
   * a job that was queued runs again, one that was running ends `failed` (its error says the emulator stopped), one
   * that was canceling ends `canceled`. The deprecated v1 surface's own records (prompt numbers, file names) are not
   * kept: its prompts are there as v2 jobs. The folder is kept on close.
   * Default: a fresh temporary directory, everything in memory but the blobs, removed on close.
   * @throws TypeError (at start) when the folder's `state.json` was written by a newer emulator.
   */
  dataDir?: string;
  /**
   * Receives one line per problem with the data folder (an unreadable `state.json` moved aside, a record skipped,
   * a write that failed). Default: standard error.
   */
  warn?: (line: string) => void;
  /** Interval of the `: keep-alive` comment lines on event streams, in ms (default 15000). */
  keepAliveMs?: number;
  /** The clock of timestamps, `expires_at`, signed URL expiry and Idempotency-Key expiry, in ms since the epoch (default Date.now). */
  now?: () => number;
  /** Receives one line per request (method, path, status, duration, request id; never headers), both origins. */
  log?: (line: string) => void;
  /**
   * Asset content as the managed cloud serves it: GET /api/v2/assets/{id}/content answers 302 to a fresh
   * signed URL `http://<host>:<second port>/blob/<token>?sig=…` on a second origin, and asset `url`s are such
   * signed URLs. The second origin refuses (403 `forbidden`) any request carrying `Authorization`,
   * `X-API-Key` or `Cookie`, supports Range, and records its requests in {@link Emulator.signedRequests}.
   * Default false: content is served directly (self-hosted).
   */
  signedUrls?: boolean;
  /** Lifetime of a signed URL, in ms (default 10 minutes; never past the asset's own expiry). */
  signedUrlTtlMs?: number;
  /** The fault plan in force from the start (faults.ts); default none. @throws TypeError when invalid. */
  faults?: FaultPlan;
  /**
   * Serve the control endpoint (control.ts: `GET|POST /__emulator/faults`, `GET|POST|DELETE /__emulator/holds`,
   * `POST /__emulator/holds/release`) at the origin root, outside the mount prefix and without authentication.
   * Default false.
   */
  control?: boolean;
  /**
   * Owned by the windows of an editor (owners.ts): `GET /__emulator/owner` with `token` holds the emulator, and
   * `onRelease` is called when no owner held it for `graceMs` or one asked it to stop (the caller then closes it).
   * Served at the origin root like the control endpoint, with or without {@link control}. Default: not owned.
   */
  owner?: OwnerOptions;
  /**
   * The model router (modelRouter/), served under `/router` on the same origin: its options (router keys,
   * deadline, the slow model's duration, quirky pages), or false to serve no router. Default: on, accepting
   * the key {@link TEST_ROUTER_KEY}.
   */
  router?: ModelRouterOptions | false;
  /**
   * The deprecated v1 surface (v1/, Cloud API v1 (deprecated)) on the same origin, mount prefix and job engine:
   * `/api/prompt`, `/api/object_info`, uploads, status, jobs/history, `/api/view` (302 to a signed URL on the second
   * origin, which then runs even without `signedUrls`) and the WebSocket `/ws`. Its options, or false to serve no v1.
   * Default: on. With `tokens`, v1 takes them as `X-API-Key` (REST) and `token` (WebSocket), never as Authorization.
   */
  v1?: V1Options | false;
  /** A ComfyUI server's native API (comfyui/) under `/comfyui` on the same origin and engine, or false. Default: on. */
  comfyui?: ComfyUiOptions | false;
}

/** A running emulator. */
export interface Emulator {
  /** Origin plus mount prefix, no trailing slash: what a client is configured with. */
  readonly baseUrl: string;
  /** `http://host:port`. */
  readonly origin: string;
  /** Every request received, in order (control requests excluded). */
  readonly requests: RecordedRequest[];
  /** The origin of signed URLs (`http://host:port`), when `signedUrls` or v1 (its `/api/view` redirect) is on. */
  readonly signedOrigin: string | undefined;
  /** Every request the signed origin received, in order (empty without `signedUrls`). */
  readonly signedRequests: RecordedRequest[];
  /** The model router's base URL, `<origin>/router` (no trailing slash); undefined with `router: false`. */
  readonly routerUrl: string | undefined;
  /** Every request the model router received, in order (empty with `router: false`). */
  readonly routerRequests: RecordedRequest[];
  /** The router's catalog in its served order (empty with `router: false`). */
  readonly routerCatalog: readonly CatalogEntry[];
  /** The v1 surface: its WebSocket URL, its prompts, its switches; undefined with `v1: false`. */
  readonly v1: V1Handle | undefined;
  /** The ComfyUI server's base URL, `<origin>/comfyui`, and its surface; undefined with `comfyui: false`. */
  readonly comfyuiUrl: string | undefined;
  readonly comfyui: ComfyUiHandle | undefined;
  /** Changes the router's openapi.json of model `id` (`provider/model[/variant]`): new revision, new ETag. */
  bumpRouterSchema(id: string): void;
  /** Every fault fired, in order (kept across plan changes). */
  readonly faultLog: readonly FaultLogEntry[];
  /** Replaces the fault plan; its counters restart. @throws TypeError when invalid (the plan in force is kept). */
  setFaults(plan: FaultPlan): void;
  /** The fault plan in force, its counters and the log. */
  faultState(): FaultState;
  /**
   * Holds nodes as `plan` says from now on (holds.ts: a node it names stands still at its start, after the progress
   * snapshot naming it, until released); `{}` holds every node; null holds none and lets every held node go on.
   * @throws TypeError when the plan is invalid (the plan in force is kept).
   */
  holdNodes(plan: HoldPlan | null): void;
  /** The hold plan in force and the nodes held now, oldest first. */
  holdState(): HoldState;
  /** Lets the held node(s) of job `jobId` (every held node when undefined) go on. @returns the nodes released. */
  releaseNodes(jobId?: string): HeldNode[];
  /**
   * Resolves with the first held node `match` accepts (every node when undefined): one held now or the next one
   * held. @throws Error (rejects) when the emulator closes first.
   */
  whenHeld(match?: (node: HeldNode) => boolean): Promise<HeldNode>;
  /** Stops both servers, ends open event streams and delayed requests, interrupts runs, cancels timers and removes the temporary data dir. */
  close(): Promise<void>;
}

const DEFAULTS = {
  host: '127.0.0.1',
  port: 8189,
  nodeDelayMs: 0,
  concurrency: 1,
  retentionMs: 60 * 60 * 1000,
  keepAliveMs: 15_000,
  signedUrlTtlMs: 10 * 60 * 1000,
};
/** The mount prefix with one leading and no trailing slash ('' for none). @throws TypeError when malformed. */
function normalizePrefix(raw: string | undefined): string {
  if (raw === undefined) return '';
  const trimmed = raw.trim().replace(/\/+$/, '');
  if (trimmed === '') return '';
  if (!trimmed.startsWith('/') || /[?#\s]/.test(trimmed) || trimmed.includes('//')) {
    throw new TypeError(`mountPrefix must be a path like /deployment/dep-1; got ${JSON.stringify(raw)}`);
  }
  return trimmed;
}

/** The deployment domain lowercased without a final dot, or undefined for none. @throws TypeError when not a host name. */
function normalizeDomain(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const domain = raw.trim().toLowerCase().replace(/\.$/, '');
  if (!/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/.test(domain)) {
    throw new TypeError(
      `deploymentDomain must be a host name like localhost (no scheme, port or path); got ${JSON.stringify(raw)}`,
    );
  }
  return domain;
}

function checkNumber(name: string, value: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!Number.isInteger(value) || value < min || value > max)
    throw new TypeError(`${name} must be an integer in ${min}..${max}; got ${value}`);
  return value;
}

/**
 * Takes back what a data folder holds (persistence.ts): assets and blobs first (job outputs refer to them), the
 * Idempotency-Key claims, then the jobs; the queued ones are checked again and queued in creation order.
 */
function restore(
  saved: SavedState,
  to: {
    assets: AssetStore;
    keys: IdempotencyKeys;
    uploadKeys: IdempotencyKeys;
    jobs: JobStore;
    runner: JobRunner;
    warn: (line: string) => void;
  },
): void {
  const dropped = to.assets.restore(saved.assets, saved.blobs);
  if (dropped > 0)
    to.warn(
      `${dropped} asset record${dropped > 1 ? 's were' : ' was'} dropped: ${dropped > 1 ? 'their' : 'its'} bytes are no longer in blobs/`,
    );
  to.keys.restore(saved.keys.jobs);
  to.uploadKeys.restore(saved.keys.uploads);
  const replan = (job: SavedJob): ReturnType<typeof validateWorkflow> | WireJobError => {
    try {
      return validateWorkflow(job.workflow, (id) => to.assets.get(job.owner, id) !== undefined);
    } catch (e) {
      if (!(e instanceof EmulatorError)) throw e;
      return { code: e.code, message: e.message, node_id: null, class_type: null, traceback: null };
    }
  };
  for (const job of to.jobs.restore(saved.jobs, replan)) to.runner.submit(job);
}

/**
 * Starts an emulator and resolves once it listens.
 * @throws TypeError for an invalid option (including an invalid fault plan); the listen error (e.g.
 *   EADDRINUSE) when the port cannot be bound.
 */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const mountPrefix = normalizePrefix(options.mountPrefix);
  const deploymentDomain = normalizeDomain(options.deploymentDomain);
  const port = checkNumber('port', options.port ?? DEFAULTS.port, 0, 65535);
  const nodeDelayMs = checkNumber('nodeDelayMs', options.nodeDelayMs ?? DEFAULTS.nodeDelayMs, 0);
  const concurrency = checkNumber('concurrency', options.concurrency ?? DEFAULTS.concurrency, 1);
  const retentionMs = checkNumber('retentionMs', options.retentionMs ?? DEFAULTS.retentionMs, 1);
  const keepAliveMs = checkNumber('keepAliveMs', options.keepAliveMs ?? DEFAULTS.keepAliveMs, 1);
  const signedUrlTtlMs = checkNumber('signedUrlTtlMs', options.signedUrlTtlMs ?? DEFAULTS.signedUrlTtlMs, 1);
  const host = options.host ?? DEFAULTS.host;
  const now = options.now ?? Date.now;
  const faults = new FaultInjector(options.faults, now);
  const holds = new NodeHolds(now);
  const ownsDataDir = options.dataDir === undefined;
  const warn = options.warn ?? ((line: string) => void process.stderr.write(`emulator: ${line}\n`));
  const dataDir = options.dataDir ?? (await fs.promises.mkdtemp(path.join(os.tmpdir(), 'comfy-emulator-')));
  await fs.promises.mkdir(dataDir, { recursive: true });

  let linkBase = mountPrefix;
  let signedBase = '';
  const links = new Links(() => linkBase);
  // v1's /api/view always redirects to a signed URL (Cloud API v1 (deprecated), Endpoints, rule 2); v2 content only
  // with signedUrls.
  const signer =
    options.signedUrls || options.v1 !== false ? new UrlSigner(() => signedBase, signedUrlTtlMs, now) : undefined;
  // Tapped so that the v1 surface sees every event of the engine (v1/messages.ts); untapped it is v2's hub.
  const hub = new TappedEventHub(keepAliveMs);
  // Set below when the data folder is kept: every store says when it changed, and the file is written after.
  let state: StateFile | undefined;
  const changed = (): void => state?.changed();
  const assets = new AssetStore({
    dir: dataDir,
    now,
    links,
    signer: options.signedUrls ? signer : undefined,
    onChange: changed,
  });
  await assets.init(!ownsDataDir);
  const keys = new IdempotencyKeys(now, changed);
  const uploadKeys = new IdempotencyKeys(now, changed);
  const jobs = new JobStore({
    now,
    retentionMs,
    hub,
    links,
    assets,
    // `runner` is created right below; a job can only be dropped once requests are served.
    onDrop: (job) => {
      runner.drop(job);
      assets.dropJob(job.id);
    },
    // Under a mount prefix or on hosts of their own the emulator is a serverless deployment: the one surface whose jobs
    // carry `logs`.
    captureLogs: mountPrefix !== '' || deploymentDomain !== undefined,
    onChange: changed,
  });
  const runner = new JobRunner({ jobs, assets, nodeDelayMs, concurrency, holds });
  if (!ownsDataDir) {
    const file = new StateFile(
      dataDir,
      (): SavedState => ({
        jobs: jobs.saved(),
        ...assets.saved(),
        keys: { jobs: keys.saved(), uploads: uploadKeys.saved() },
      }),
      warn,
    );
    restore(file.load(), { assets, keys, uploadKeys, jobs, runner, warn });
    state = file;
    // What the restart changed (a run that was interrupted now failed) is saved at once.
    state.changed();
  }

  const requests: RecordedRequest[] = [];
  const v1 =
    options.v1 === false
      ? undefined
      : createV1Surface({
          options: options.v1 ?? {},
          tokens: options.tokens ?? [],
          mountPrefix,
          jobs,
          assets,
          runner,
          hub,
          faults,
          signer: signer!,
          requests,
          now,
          log: options.log,
        });
  const comfyui =
    options.comfyui === false ? undefined : createComfyUiSurface({ jobs, assets, runner, hub, now, log: options.log });
  const router = new Router([
    ...jobRoutes({ jobs, assets, keys, runner, hub, faults }),
    ...assetRoutes({ assets, jobs, keys: uploadKeys, faults, signer: options.signedUrls ? signer : undefined }),
    healthRoute,
    ...(v1?.routes ?? []),
  ]);
  const owners = options.owner === undefined ? undefined : new Owners(options.owner);
  const modelRouter =
    options.router === false ? undefined : createModelRouter(options.router ?? {}, faults, now, options.log);
  const mainListener = createRequestListener({
    mountPrefix,
    deploymentDomain,
    auth: createAuth(options.tokens ?? []),
    faults,
    router,
    requests,
    log: options.log,
    control: controlOf(options.control ? controlHandler(faults, holds) : undefined, owners),
  });
  const server = http.createServer((req, res) => {
    // The router and the ComfyUI server own their prefixes at the origin root, outside the mount prefix and auth.
    const target = req.url ?? '/';
    if (
      modelRouter !== undefined &&
      (target === ROUTER_PREFIX || target.startsWith(`${ROUTER_PREFIX}/`) || target.startsWith(`${ROUTER_PREFIX}?`))
    )
      modelRouter.listener(req, res);
    else if (comfyui?.owns(target)) comfyui.listener(req, res);
    else mainListener(req, res);
  });
  // WebSocket upgrades: v1's `/ws`; anything else is answered 404 and closed.
  server.on('upgrade', (req, socket, head) => {
    if (comfyui?.handleUpgrade(req, socket, head)) return;
    if (v1?.handleUpgrade(req, socket, head)) return;
    socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
  });
  const signedRequests: RecordedRequest[] = [];
  const signedServer =
    signer === undefined
      ? undefined
      : http.createServer(
          createRequestListener({
            mountPrefix: '',
            auth: REJECT_CREDENTIALS,
            faults,
            router: new Router([signedContentRoute({ assets, signer, faults })]),
            requests: signedRequests,
            log: options.log,
          }),
        );
  try {
    await listen(server, port, host);
    if (signedServer !== undefined) await listen(signedServer, 0, host);
  } catch (e) {
    if (server.listening) await stop(server);
    owners?.close();
    await runner.close();
    state?.close();
    if (ownsDataDir) await fs.promises.rm(dataDir, { recursive: true, force: true });
    throw e;
  }
  const origin = originOf(server.address() as AddressInfo);
  // A deployment's links are host-relative (its host is the one the client asked for); else absolute.
  if (mountPrefix === '' && deploymentDomain === undefined) linkBase = origin;
  const signedOrigin = signedServer === undefined ? undefined : originOf(signedServer.address() as AddressInfo);
  signedBase = signedOrigin ?? '';

  // Retention and key expiry are also checked on every access; the sweep only frees memory and disk.
  const sweeper = setInterval(
    () => {
      jobs.sweep();
      assets.sweep();
      keys.sweep();
      uploadKeys.sweep();
      modelRouter?.sweep();
    },
    Math.max(1000, Math.min(retentionMs, 60_000)),
  );
  sweeper.unref();

  let closing: Promise<void> | undefined;
  const close = async (): Promise<void> => {
    clearInterval(sweeper);
    faults.close();
    holds.close();
    modelRouter?.close();
    v1?.close();
    comfyui?.close();
    owners?.close();
    hub.closeAll();
    const stopped = Promise.all([stop(server), signedServer === undefined ? undefined : stop(signedServer)]);
    await runner.close();
    // After the runs stopped: a job interrupted now is saved `running` (it ends `failed` at the next start).
    state?.close();
    await stopped;
    if (ownsDataDir) await fs.promises.rm(dataDir, { recursive: true, force: true });
  };
  return {
    baseUrl: origin + mountPrefix,
    origin,
    requests,
    signedOrigin,
    signedRequests,
    routerUrl: modelRouter === undefined ? undefined : origin + ROUTER_PREFIX,
    routerRequests: modelRouter?.requests ?? [],
    routerCatalog: modelRouter?.entries ?? [],
    v1: v1?.handle(origin),
    ...(comfyui?.handle(origin) ?? { comfyuiUrl: undefined, comfyui: undefined }),
    bumpRouterSchema: (id) => modelRouter?.bumpSchema(id),
    faultLog: faults.log,
    setFaults: (plan) => faults.setPlan(plan),
    faultState: () => faults.state(),
    holdNodes: (plan) => holds.setPlan(plan),
    holdState: () => holds.state(),
    releaseNodes: (jobId) => holds.release(jobId),
    whenHeld: (match) => holds.whenHeld(match),
    close: () => (closing ??= close()),
  };
}
