/**
 * The health of a connection (a cheap probe, `GET /api/v2/health` where the surface has it, else the last request's
 * outcome). The self-hosted companion and the emulator serve the probe (not in Job and Asset API v2; the companion's
 * own route); the managed cloud and a deployment answer it 404, and then the last request tells.
 */
import type { Clock } from '../http/clock';
import { globalFetch, type FetchFunction } from '../http/fetchEngine';
import type { RequestLogEntry } from '../http/transport';
import { untranslated, type Translate } from '../util/l10n';

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

/**
 * True when a connection that was down (`unreachable` or `error`) answers again (any other state: it answers, even
 * `unauthorized`): the moment to read the remembered jobs again. Unknown before (`undefined`, e.g. just switched to)
 * is not a return.
 */
export function isReconnect(before: HealthState | undefined, after: HealthState): boolean {
  const down = (state: HealthState | undefined): boolean => state === 'unreachable' || state === 'error';
  return down(before) && !down(after);
}

/** Options of {@link probeHealth}. */
export interface HealthProbeOptions {
  /** The connection's normalised base URL (http/baseUrl.ts `normalizeBaseUrl`). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer` to the base URL's own origin (a companion with a token wants it even here). */
  apiKey?: string;
  /** Default `globalThis.fetch` (the extension host's, with the user's proxy). */
  fetch?: FetchFunction;
  /** The probe's route under the base URL (connections.ts `healthPathOf`). Default `/api/v2/health`. */
  path?: string;
  /** Time allowed for the whole probe, ms. Default 5 000. */
  timeoutMs?: number;
  /** Aborts the probe (it then resolves `unreachable`). */
  signal?: AbortSignal;
  /** The words of `detail` in the user's language (the extension passes `vscode.l10n.t`). Default English. */
  t?: Translate;
}

/**
 * One `GET {baseUrl}{path}` (default `/api/v2/health`), never redirected, body discarded. Never rejects: every outcome is a
 * {@link Health}. 2xx is `ok`, 404/405 `unsupported`, 401/403 `unauthorized`, any other status `error`, no answer
 * `unreachable`.
 */
export async function probeHealth(options: HealthProbeOptions): Promise<Health> {
  const fetchFn = options.fetch ?? globalFetch;
  const t = options.t ?? untranslated;
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 5_000);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  let status: number;
  try {
    const res = await fetchFn(`${options.baseUrl}${options.path ?? '/api/v2/health'}`, {
      method: 'GET',
      headers,
      redirect: 'manual',
      signal,
    });
    status = res.status;
    // The body is not needed; cancelling frees the connection without reading what the server sends.
    await res.body?.cancel().catch(() => undefined);
  } catch (err) {
    const reason = timeout.aborted
      ? t('timed out')
      : ((err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name);
    return { state: 'unreachable', detail: t('health probe: no answer ({0})', reason) };
  }
  return healthFromStatus(status, t('health probe'), t);
}

/**
 * The health a finished request implies (the fallback when the surface has no probe): an answer below 500 is
 * `ok` (the server is there; a 404 of one job says nothing of the server), 401/403 `unauthorized`, 5xx `error`,
 * no answer `unreachable`. `entry` is the transport's log entry (transport.ts {@link RequestLogEntry}); `t` words the
 * detail in the user's language (default English).
 */
export function healthFromRequest(entry: RequestLogEntry, t: Translate = untranslated): Health {
  if (entry.status === undefined)
    return { state: 'unreachable', detail: t('last request: no answer ({0})', entry.error ?? t('failed')) };
  if (entry.status === 401 || entry.status === 403)
    return { state: 'unauthorized', detail: t('last request: {0}', entry.status) };
  if (entry.status >= 500) return { state: 'error', detail: t('last request: {0}', entry.status) };
  return { state: 'ok', detail: t('last request: {0}', entry.status) };
}

/** Whether a health state says the server is down (no answer, or a 5xx). */
function isDown(state: HealthState | undefined): boolean {
  return state === 'unreachable' || state === 'error';
}

/** What {@link ConnectionHealth} did with an outcome: the health now, whether it changed, whether to probe at once. */
export interface HealthChange {
  /** The state before the outcome (undefined: not known yet). */
  readonly before: HealthState | undefined;
  /** The health now (undefined: still not known). */
  readonly health: Health | undefined;
  /** True when the health shown changed (state or detail). */
  readonly changed: boolean;
  /** True when the owner should probe now (a request got no answer, or a 5xx, where the surface has a probe). */
  readonly probe: boolean;
}

/**
 * The health of ONE connection as the status bar shows it, from its probes and from every request made on it (the
 * extension's clients log each request here). Rules:
 * 1. Where the surface has no probe (it answered 404 or 405), the last request's outcome is the health
 *    ({@link healthFromRequest}); until a request is made, `unsupported`.
 * 2. Any answer of the server (a status below 500 other than 401 and 403: a 404 of one job is still the server
 *    answering) proves it reachable: a connection shown down (`unreachable` or `error`), or not known yet, is `ok`
 *    on that first answer, whichever request it was (a watch's read of a job, a listing), not at the next probe.
 * 3. A request that got no answer, or a 5xx, asks for a probe now where the surface has one; the probe says.
 * 4. A probe's outcome is the health, except a probe that says "down" while a request was answered after the probe
 *    began: the newer answer stands (a probe sent just before the server came back must not undo it).
 * Start a new one for another connection (a switch).
 */
export class ConnectionHealth {
  private current: Health | undefined;
  private served: boolean | undefined;
  /** How many requests got an answer (rule 4: a probe's ticket is this count when it began). */
  private answered = 0;

  /** @param t the words of a request's `detail` in the user's language (default English). */
  constructor(private readonly t: Translate = untranslated) {}

  /** The health shown (undefined until the first probe or answer). */
  get health(): Health | undefined {
    return this.current;
  }

  /** Whether the surface answers the probe (undefined until a probe said). */
  get probeServed(): boolean | undefined {
    return this.served;
  }

  /** A probe begins: the ticket to hand to {@link probeDone} with its outcome. */
  probeStarted(): number {
    return this.answered;
  }

  /** A probe's outcome (rules 1 and 4). */
  probeDone(ticket: number, health: Health): HealthChange {
    this.served = health.state !== 'unsupported';
    const answeredSince = this.answered !== ticket;
    // Where the probe is not served, a request seen since keeps its word; a "down" older than an answer is dropped.
    const keep = (!this.served && this.current !== undefined) || (isDown(health.state) && answeredSince);
    return this.set(keep ? this.current : health, false);
  }

  /** A request of this connection ended (`entry`: the transport's log entry; rules 1 to 3). */
  requestDone(entry: RequestLogEntry): HealthChange {
    const seen = healthFromRequest(entry, this.t);
    if (seen.state === 'ok' || seen.state === 'unauthorized') this.answered++;
    if (this.served === false) return this.set(seen, false);
    if (isDown(seen.state)) return this.set(this.current, true);
    if (seen.state === 'ok' && (this.current === undefined || isDown(this.current.state))) return this.set(seen, false);
    return this.set(this.current, false);
  }

  private set(health: Health | undefined, probe: boolean): HealthChange {
    const before = this.current;
    this.current = health;
    const changed = before?.state !== health?.state || before?.detail !== health?.detail;
    return { before: before?.state, health, changed, probe };
  }
}

function healthFromStatus(status: number, what: string, t: Translate): Health {
  if (status >= 200 && status < 300) return { state: 'ok', detail: `${what}: ${status}` };
  if (status === 404 || status === 405)
    return { state: 'unsupported', detail: t('{0}: not served here ({1})', what, status) };
  if (status === 401 || status === 403)
    return { state: 'unauthorized', detail: t('{0}: {1} (set the API key)', what, status) };
  return { state: 'error', detail: `${what}: ${status}` };
}

/** Options of {@link HealthSchedule}. */
export interface HealthScheduleOptions {
  /** Runs one probe (the status bar's `probe()`); a rejection is ignored (the probe reports its own outcome). */
  probe: () => Promise<void>;
  /** Time and the abortable wait between probes (tests pass a `ManualClock`). */
  clock: Clock;
  /** Time between probes while the window is focused, ms. Default {@link HEALTH_INTERVAL_MS}. */
  intervalMs?: number;
  /** Whether the window has the focus at the start. Default true. */
  focused?: boolean;
}

/** Default time between two health probes of the active connection while the window has the focus, ms. */
const HEALTH_INTERVAL_MS = 60_000;

/**
 * When to re-probe the active connection's health (so that the status bar's health is not
 * left stale): every `intervalMs` after the last probe while the window has the focus; none while it has not (a
 * window in the background costs no requests); when the focus returns and the last probe is `intervalMs` old or more,
 * one probe at once, then the period again. A probe made elsewhere (a switch, a new key) is told with
 * {@link noteProbe} and restarts the period. Probes never overlap: the next wait starts when a probe ends.
 */
export class HealthSchedule {
  private readonly clock: Clock;
  private readonly intervalMs: number;
  private focused: boolean;
  private last: number | undefined;
  private waiting: AbortController | undefined;
  private running = false;
  private disposed = false;

  constructor(private readonly options: HealthScheduleOptions) {
    this.clock = options.clock;
    this.intervalMs = options.intervalMs ?? HEALTH_INTERVAL_MS;
    this.focused = options.focused ?? true;
  }

  /** Starts the period, counting the probe that the owner makes at start as the first one. */
  start(): void {
    this.noteProbe();
  }

  /** A probe was just made (by the owner): the next one is `intervalMs` from now. */
  noteProbe(): void {
    this.last = this.clock.now();
    this.arm();
  }

  /** The window's focus changed: losing it stops the period; regaining it probes at once if a period has passed. */
  setFocused(focused: boolean): void {
    if (this.disposed || focused === this.focused) return;
    this.focused = focused;
    if (!focused) {
      this.waiting?.abort();
      this.waiting = undefined;
      return;
    }
    if (this.last === undefined || this.clock.now() - this.last >= this.intervalMs) void this.fire();
    else this.arm();
  }

  /** Stops every future probe. */
  dispose(): void {
    this.disposed = true;
    this.waiting?.abort();
    this.waiting = undefined;
  }

  /** Waits until the next probe is due (replacing any earlier wait), then probes. */
  private arm(): void {
    this.waiting?.abort();
    this.waiting = undefined;
    if (this.disposed || !this.focused || this.running) return;
    const controller = new AbortController();
    this.waiting = controller;
    const delay = Math.max(0, (this.last ?? this.clock.now()) + this.intervalMs - this.clock.now());
    this.clock.sleep(delay, controller.signal).then(
      () => {
        if (this.waiting === controller) void this.fire();
      },
      // Aborted: a newer wait, a lost focus or disposal took over.
      () => undefined,
    );
  }

  private async fire(): Promise<void> {
    this.waiting?.abort();
    this.waiting = undefined;
    if (this.disposed || this.running) return;
    this.running = true;
    this.last = this.clock.now();
    try {
      await this.options.probe();
    } catch {
      // the probe reports its own outcome; a failing one must not stop the schedule
    } finally {
      this.running = false;
    }
    this.last = this.clock.now();
    this.arm();
  }
}
