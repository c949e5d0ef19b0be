/**
 * The one place a connection becomes a job backend: given the connection's surface and API (`v2`, the deprecated
 * `v1`, or `comfyui`, a ComfyUI server's native API: core/connection), its API key and how requests are sent, {@link createBackend} builds the {@link JobBackend}
 * that speaks that API, and the client of its assets where the API has them. The CLI builds its backend here, and so
 * can the extension: nothing else asks which API a connection speaks (lint: only this folder, besides the API folders
 * themselves and the emulator, imports both `v1/` and `v2/`).
 */
import type { ConnectionApi } from '../connection/connections';
import type { Clock } from '../http/clock';
import type { HttpEngine } from '../http/engine';
import type { RequestLogEntry } from '../http/transport';
import type { JobBackend } from '../jobs/backend';
import { JobService, type Connection, type ServiceLog } from '../jobs/jobService';
import type { HashCache } from '../state/hashCache';
import type { JobRecord, StateStore } from '../state/stateStore';
import { ComfyUIClient } from '../comfyui/client';
import { ComfyUIJobBackend } from '../comfyui/jobBackend';
import { V1Client } from '../v1/client';
import { V1JobBackend } from '../v1/jobBackend';
import { V2Client } from '../v2/client';
import { V2JobBackend } from '../v2/jobBackend';
import type { Surface } from '../v2/surface';

/** What {@link createBackend} builds a connection's backend from. */
export interface BackendOptions {
  /** The connection's surface: its base URL is where every request goes. */
  surface: Pick<Surface, 'baseUrl'>;
  /** The API the connection speaks (`comfyCloud.connections[].api`, the CLI's `--api`). */
  api: ConnectionApi;
  /** The API key of the surface's origin: a Bearer token on v2 and comfyui, `X-API-Key` on v1; none for an open server. */
  apiKey?: string;
  /** The User-Agent (http/version.ts `userAgent('cli' | 'vscode')`). */
  userAgent: string;
  /** What sends the requests (the extension host's fetch in the editor); default the build's own engine (undici). */
  engine?: HttpEngine;
  /** Told each request's outcome (the extension's log and health). */
  log?: (entry: RequestLogEntry) => void;
  /** Time allowed until an answer starts, and between two bytes of it (ms). Default the transport's (30 000). */
  timeoutMs?: number;
  /** The clock of the client's waits (retries, polling); default the system clock. */
  clock?: Clock;
  /**
   * The settle window of an unknown outcome's resolution (ms, core/jobs/unknownOutcome.ts): how long after a send its
   * job shows in the listing. Default the backend's (3 s). Used where the API has an Idempotency-Key.
   */
  settleMs?: number;
  /** How long a watch may go on failing transiently before it gives up (ms). Default the backend's. */
  outageBudgetMs?: number;
  /** Upload hashes remembered by path, size, mtime and inode, where the API has assets. Default none. */
  hashCache?: HashCache;
  /** The partner-service key, where the API takes one with every submission (v1: `extra_data.api_key_svc_org`). */
  partnerKey?: string;
  /**
   * The remembered jobs, where the API cannot say itself what this client did to a job (comfyui: a prompt removed from
   * the queue leaves no trace on the server, so only its record says `canceled`). Default none.
   */
  store?: Pick<StateStore, 'list' | 'recordStatus'>;
}

/** A connection's job backend, and the client of its assets (uploads, downloads, deletes) where its API has them. */
export interface BuiltBackend {
  readonly backend: JobBackend;
  /** The same client as the backend's (closed with it); undefined when `backend.capabilities.assets` is false. */
  readonly assets?: V2Client;
}

/**
 * Builds the job backend of the API `options.api` at `options.surface` (see the module comment). The backend owns its
 * client: closing it closes the asset client too.
 * @throws InputError `bad_base_url` when the base URL is not http(s).
 */
export function createBackend(options: BackendOptions): BuiltBackend {
  const common = {
    baseUrl: options.surface.baseUrl,
    apiKey: options.apiKey || undefined,
    userAgent: options.userAgent,
    engine: options.engine,
    log: options.log,
    timeoutMs: options.timeoutMs,
    clock: options.clock,
  };
  if (options.api === 'v1')
    return { backend: new V1JobBackend(new V1Client(common), { partnerKey: options.partnerKey }) };
  // A ComfyUI server's native API: no key by default; one the connection carries is sent as `Authorization: Bearer`.
  if (options.api === 'comfyui')
    return {
      backend: new ComfyUIJobBackend(new ComfyUIClient(common), {
        store: options.store,
        outageBudgetMs: options.outageBudgetMs,
      }),
    };
  const client = new V2Client({ ...common, hashCache: options.hashCache });
  const watch = options.outageBudgetMs !== undefined ? { outageBudgetMs: options.outageBudgetMs } : undefined;
  return { backend: new V2JobBackend(client, { settleMs: options.settleMs, watch }), assets: client };
}

/** Options of {@link headlessJobService}. */
export interface HeadlessServiceOptions {
  /** The store of remembered submissions (shared by the CLI and the extension). */
  store: StateStore;
  /** Where the service writes what it did; default nowhere. */
  log?: ServiceLog;
  /** Recorded with each submission. Default `core`. */
  clientName?: JobRecord['client'];
}

/**
 * A job service (core/jobs/jobService.ts: one watch per job, however many follow it) over ONE connection that never
 * changes, built by `create` at the first lease: what a process without settings uses (the CLI, a test). Dispose it to
 * stop its watches and close the connection's backend.
 */
export function headlessJobService<C extends Connection>(
  create: () => C | Promise<C>,
  options: HeadlessServiceOptions,
): JobService<C> {
  const silent: ServiceLog = { info: () => undefined, warn: () => undefined };
  return new JobService<C>({
    // One connection for the service's life: its identity never changes, so it is built once.
    clients: { identity: () => Promise.resolve('headless'), create: async () => create() },
    store: options.store,
    log: options.log ?? silent,
    clientName: options.clientName,
  });
}

// What the extension and the CLI name of a backend's asset client (BuiltBackend.assets), re-exported here so that they
// never import `core/v2`: the client's type and its upload phases, the refusal of deleting an asset a job still uses,
// and the setting of a node's input to an uploaded asset's reference.
export { V2Client, type UploadPhase } from '../v2/client';
export { AssetInUseError } from '../v2/errors';
export { setNodeInput } from '../v2/assets';
