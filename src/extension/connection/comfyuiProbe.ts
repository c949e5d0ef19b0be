/**
 * The start-up offer of a ComfyUI server found running on this machine, its pure parts (no `vscode`): whether to
 * look at all ({@link comfyUIOfferDecision}) and the look itself ({@link probeComfyUI}, one `GET /system_stats`,
 * ComfyUI server API (observed), with a short timeout on an injected clock and fetch).
 */
import * as z from 'zod/mini';
import { FetchEngine, Transport, globalFetch, systemClock, type Clock, type FetchFunction } from '../../core/http';
import { surfaceFromBaseUrl, type ConnectionEntry } from '../../core/connection';

/** Time allowed for the probe's answer (headers, then each next byte of the body), ms: a server on loopback answers at once. */
export const COMFYUI_PROBE_TIMEOUT_MS = 2_000;

/** Largest `/system_stats` body read, bytes (it is a few hundred; past this, it is no ComfyUI answer). */
const MAX_SYSTEM_STATS_BYTES = 256 * 1024;

/**
 * `GET /system_stats` as ComfyUI answers it (ComfyUI server API (observed)): `{system: {...}, devices: [...]}`. Only
 * `system` being an object is asked: what makes the answer ComfyUI's rather than any server's JSON.
 */
const SystemStatsSchema = z.looseObject({ system: z.looseObject({}) });

/**
 * Whether to look for a ComfyUI server at `baseUrl` at start-up:
 * - `declined`: the person answered "Not Now" before (it is not asked again);
 * - `unusable`: the connection settings do not parse (the status bar says why; nothing is offered over them);
 * - `known`: a connection (or `comfyCloud.baseUrl`) already points at that address;
 * - `probe`: none of these: look.
 */
export type ComfyUIOfferDecision = 'probe' | 'declined' | 'known' | 'unusable';

/** What {@link comfyUIOfferDecision} decides from. */
export interface ComfyUIOfferFacts {
  /** The address probed (e.g. `http://127.0.0.1:8188`). */
  baseUrl: string;
  /** True once the person answered "Not Now" (globalState). */
  declined: boolean;
  /** The parsed `comfyCloud.connections`, or undefined when they do not parse. */
  connections: readonly ConnectionEntry[] | undefined;
  /** `comfyCloud.baseUrl` (the default connection's address). */
  defaultBaseUrl: string;
}

/** The decision of {@link ComfyUIOfferDecision} (in that order of rules). Addresses are compared normalised. */
export function comfyUIOfferDecision(facts: ComfyUIOfferFacts): ComfyUIOfferDecision {
  if (facts.declined) return 'declined';
  if (!facts.connections) return 'unusable';
  const target = normalised(facts.baseUrl);
  const addresses = [facts.defaultBaseUrl, ...facts.connections.map((c) => c.baseUrl)];
  return addresses.some((url) => url !== undefined && normalised(url) === target) ? 'known' : 'probe';
}

/** A base URL in its normalised form (as connections are resolved), or undefined when it is not a valid one. */
function normalised(url: string): string | undefined {
  try {
    return surfaceFromBaseUrl(url).baseUrl;
  } catch {
    return undefined;
  }
}

/** Options of {@link probeComfyUI}. */
export interface ComfyUIProbeOptions {
  /** The server's base URL. */
  baseUrl: string;
  /** What sends the request: the extension host's fetch (its proxy settings). Default `globalThis.fetch`. */
  fetch?: FetchFunction;
  /** The clock of the wait for the answer's headers (tests inject a manual one). Default the system clock. */
  clock?: Clock;
  /** Time allowed for the answer, ms. Default {@link COMFYUI_PROBE_TIMEOUT_MS}. */
  timeoutMs?: number;
  /** Aborts the probe (it then resolves false). */
  signal?: AbortSignal;
}

/**
 * True when a ComfyUI server answers at `baseUrl`: one `GET /system_stats`, not retried, answered 2xx with a JSON
 * body whose `system` is an object. Never rejects: no answer in time, another status, another body, a bad URL are
 * all false. No API key is sent (the probe is only a look; a server that wants one gets it once added).
 */
export async function probeComfyUI(options: ComfyUIProbeOptions): Promise<boolean> {
  const clock = options.clock ?? systemClock;
  let transport: Transport;
  try {
    transport = new Transport({
      baseUrl: options.baseUrl,
      engine: new FetchEngine(options.fetch ?? globalFetch, { clock }),
      timeoutMs: options.timeoutMs ?? COMFYUI_PROBE_TIMEOUT_MS,
      timeoutClock: clock,
      maxJsonBytes: MAX_SYSTEM_STATS_BYTES,
    });
  } catch {
    return false;
  }
  try {
    await transport.json('GET', '/system_stats', SystemStatsSchema, { signal: options.signal });
    return true;
  } catch {
    return false;
  } finally {
    await transport.close().catch(() => undefined);
  }
}
