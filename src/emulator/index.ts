/**
 * The local emulator of the Comfy job service (jobs-assets-api-v2.md): a real HTTP server that accepts
 * API-format workflows of weight-free nodes, really executes them and serves their PNG outputs. Started
 * in-process by tests and by `comfy-cloud emulator`.
 *
 * Surfaces: without options it is the self-hosted companion (loopback, port 8189, no auth, absolute links);
 * with `tokens` it requires a bearer token per owner; with `mountPrefix` it is a serverless deployment
 * (served only under the prefix, host-relative links).
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { assetRoutes } from './assetRoutes';
import { AssetStore } from './assets';
import { createAuth } from './auth';
import { EventHub } from './events';
import { NO_FAULTS } from './faults';
import { IdempotencyKeys } from './idempotency';
import { jobRoutes } from './jobRoutes';
import { JobStore } from './jobs';
import { Links } from './links';
import { Router } from './router';
import { JobRunner } from './runner';
import { createRequestListener, healthRoute, type RecordedRequest } from './server';

export type { RecordedRequest } from './server';

/** How to start the emulator. Every field is optional. */
export interface EmulatorOptions {
  /** Address to bind; default '127.0.0.1'. */
  host?: string;
  /** Port; default 8189; 0 picks a free port. */
  port?: number;
  /**
   * When non-empty, every request needs `Authorization: Bearer <one of them>`, else 401 `unauthorized`; each
   * token is its own owner (another token's jobs and assets answer 404 `not_found`). Empty: no auth, one owner.
   */
  tokens?: string[];
  /**
   * E.g. '/deployment/dep-1': serve only under this prefix (other paths 404 `not_found`), with host-relative
   * `urls` that include it, as a serverless deployment. Without a prefix `urls` are absolute.
   */
  mountPrefix?: string;
  /** Delay per executed node, in ms (default 0); cancel interrupts it. */
  nodeDelayMs?: number;
  /** Jobs running at once (default 1). */
  concurrency?: number;
  /** `expires_at` = `created_at` + this, in ms (default 1 hour); after it the job answers 404 and is dropped. */
  retentionMs?: number;
  /** Where output blobs are written (default: a fresh temporary directory, removed on close; a given one is kept). */
  dataDir?: string;
  /** Interval of the `: keep-alive` comment lines on event streams, in ms (default 15000). */
  keepAliveMs?: number;
  /** The clock of timestamps, `expires_at` and Idempotency-Key expiry, in ms since the epoch (default Date.now). */
  now?: () => number;
  /** Receives one line per request (method, path, status, duration, request id; never headers). */
  log?: (line: string) => void;
}

/** A running emulator. */
export interface Emulator {
  /** Origin plus mount prefix, no trailing slash: what a client is configured with. */
  readonly baseUrl: string;
  /** `http://host:port`. */
  readonly origin: string;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Stops the server, ends open event streams, interrupts runs, cancels timers and removes the temporary data dir. */
  close(): Promise<void>;
}

const DEFAULTS = { host: '127.0.0.1', port: 8189, nodeDelayMs: 0, concurrency: 1, retentionMs: 60 * 60 * 1000, keepAliveMs: 15_000 };

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

function checkNumber(name: string, value: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!Number.isInteger(value) || value < min || value > max) throw new TypeError(`${name} must be an integer in ${min}..${max}; got ${value}`);
  return value;
}

/** The origin clients use for a bound address: a wildcard address is reached through loopback. */
function originOf(address: AddressInfo): string {
  const host = address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '::1' : address.address;
  return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}

/**
 * Starts an emulator and resolves once it listens.
 * @throws TypeError for an invalid option; the listen error (e.g. EADDRINUSE) when the port cannot be bound.
 */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const mountPrefix = normalizePrefix(options.mountPrefix);
  const port = checkNumber('port', options.port ?? DEFAULTS.port, 0, 65535);
  const nodeDelayMs = checkNumber('nodeDelayMs', options.nodeDelayMs ?? DEFAULTS.nodeDelayMs, 0);
  const concurrency = checkNumber('concurrency', options.concurrency ?? DEFAULTS.concurrency, 1);
  const retentionMs = checkNumber('retentionMs', options.retentionMs ?? DEFAULTS.retentionMs, 1);
  const keepAliveMs = checkNumber('keepAliveMs', options.keepAliveMs ?? DEFAULTS.keepAliveMs, 1);
  const now = options.now ?? Date.now;
  const ownsDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await fs.promises.mkdtemp(path.join(os.tmpdir(), 'comfy-emulator-')));
  await fs.promises.mkdir(dataDir, { recursive: true });

  let linkBase = mountPrefix;
  const links = new Links(() => linkBase);
  const hub = new EventHub(keepAliveMs);
  const assets = new AssetStore({ dir: dataDir, now, links });
  const keys = new IdempotencyKeys(now);
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
  });
  const runner = new JobRunner({ jobs, assets, now, nodeDelayMs, concurrency });

  const requests: RecordedRequest[] = [];
  const router = new Router([...jobRoutes({ jobs, assets, keys, runner, hub }), ...assetRoutes({ assets }), healthRoute]);
  const server = http.createServer(
    createRequestListener({ mountPrefix, auth: createAuth(options.tokens ?? []), faults: NO_FAULTS, router, requests, log: options.log }),
  );
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, options.host ?? DEFAULTS.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (e) {
    if (ownsDataDir) await fs.promises.rm(dataDir, { recursive: true, force: true });
    throw e;
  }
  const origin = originOf(server.address() as AddressInfo);
  if (mountPrefix === '') linkBase = origin;

  // Retention and key expiry are also checked on every access; the sweep only frees memory and disk.
  const sweeper = setInterval(
    () => {
      jobs.sweep();
      assets.sweep();
      keys.sweep();
    },
    Math.max(1000, Math.min(retentionMs, 60_000)),
  );
  sweeper.unref();

  let closing: Promise<void> | undefined;
  const close = async (): Promise<void> => {
    clearInterval(sweeper);
    hub.closeAll();
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await runner.close();
    await stopped;
    if (ownsDataDir) await fs.promises.rm(dataDir, { recursive: true, force: true });
  };
  return {
    baseUrl: origin + mountPrefix,
    origin,
    requests,
    close: () => (closing ??= close()),
  };
}
