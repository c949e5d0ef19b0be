/**
 * The health of a connection (issue 9, "Connections": a cheap probe, `GET /api/v2/health` where the surface has
 * it, else the last request's outcome). The self-hosted companion and the emulator serve the probe (FACTS.md "v2
 * jobs"); the managed cloud and a deployment answer it 404, and then the last request tells.
 */
import { globalFetch, type FetchFunction } from './http/fetchEngine';
import type { RequestLogEntry } from './http/transport';

/**
 * - `ok`: the server answered (the probe 2xx, or the last request got an answer below 500);
 * - `unsupported`: the surface has no probe (404 or 405) and no request was made yet;
 * - `unauthorized`: 401 or 403 (a token is configured and the key is missing or wrong);
 * - `error`: the server answered 5xx, or something else the probe did not expect;
 * - `unreachable`: no answer (connection refused, DNS, timeout).
 */
export type HealthState = 'ok' | 'unsupported' | 'unauthorized' | 'error' | 'unreachable';

/** A health state and what it was read from, in a few words for a tooltip (no secrets: only status and code). */
export interface Health {
  state: HealthState;
  detail: string;
}

/** Options of {@link probeHealth}. */
export interface HealthProbeOptions {
  /** The connection's normalised base URL (surface.ts `normalizeBaseUrl`). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer` to the base URL's own origin (a companion with a token wants it even here). */
  apiKey?: string;
  /** Default `globalThis.fetch` (the extension host's, with the user's proxy). */
  fetch?: FetchFunction;
  /** Time allowed for the whole probe, ms. Default 5 000. */
  timeoutMs?: number;
  /** Aborts the probe (it then resolves `unreachable`). */
  signal?: AbortSignal;
}

/**
 * One `GET {baseUrl}/api/v2/health`, never redirected, body discarded. Never rejects: every outcome is a
 * {@link Health}. 2xx is `ok`, 404/405 `unsupported`, 401/403 `unauthorized`, any other status `error`, no answer
 * `unreachable`.
 */
export async function probeHealth(options: HealthProbeOptions): Promise<Health> {
  const fetchFn = options.fetch ?? globalFetch;
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 5_000);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  let status: number;
  try {
    const res = await fetchFn(`${options.baseUrl}/api/v2/health`, { method: 'GET', headers, redirect: 'manual', signal });
    status = res.status;
    // The body is not needed; cancelling frees the connection without reading what the server sends.
    await res.body?.cancel().catch(() => undefined);
  } catch (err) {
    const reason = timeout.aborted ? 'timed out' : (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
    return { state: 'unreachable', detail: `health probe: no answer (${reason})` };
  }
  return healthFromStatus(status, 'health probe');
}

/**
 * The health a finished request implies (the fallback when the surface has no probe): an answer below 500 is
 * `ok` (the server is there; a 404 of one job says nothing of the server), 401/403 `unauthorized`, 5xx `error`,
 * no answer `unreachable`. `entry` is the transport's log entry (transport.ts {@link RequestLogEntry}).
 */
export function healthFromRequest(entry: RequestLogEntry): Health {
  if (entry.status === undefined) return { state: 'unreachable', detail: `last request: no answer (${entry.error ?? 'failed'})` };
  if (entry.status === 401 || entry.status === 403) return { state: 'unauthorized', detail: `last request: ${entry.status}` };
  if (entry.status >= 500) return { state: 'error', detail: `last request: ${entry.status}` };
  return { state: 'ok', detail: `last request: ${entry.status}` };
}

function healthFromStatus(status: number, what: string): Health {
  if (status >= 200 && status < 300) return { state: 'ok', detail: `${what}: ${status}` };
  if (status === 404 || status === 405) return { state: 'unsupported', detail: `${what}: not served here (${status})` };
  if (status === 401 || status === 403) return { state: 'unauthorized', detail: `${what}: ${status} (set the API key)` };
  return { state: 'error', detail: `${what}: ${status}` };
}
