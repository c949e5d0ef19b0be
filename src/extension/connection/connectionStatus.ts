import * as vscode from 'vscode';
import {
  ConnectionHealth,
  HealthSchedule,
  connectionReadiness,
  healthPathOf,
  isDeprecatedApi,
  isReconnect,
  isStaleEmulatorConnection,
  needsApiKey,
  probeHealth,
  type ActiveConnection,
  type ConnectionReadiness,
  type Health,
  type HealthChange,
} from '../../core/connection';
import { systemClock, type Clock } from '../../core';
import type { RequestLogEntry } from '../../core/http';
import type { Config } from '../platform/config';
import { Commands, EMULATOR_CONNECTION_NAME, StatusBarItems } from '../platform/constants';
import { Disposable } from '../platform/disposable';
import type { Display } from '../platform/display';
import { apiWords } from './apiWords';
import type { EmulatorProcess } from './emulatorProcess';
import type { ApiKeys } from '../platform/secrets';

/** Words for each health state, in the tooltip and for screen readers. */
function healthWords(state: Health['state']): string {
  switch (state) {
    case 'ok':
      return vscode.l10n.t('reachable');
    case 'unsupported':
      return vscode.l10n.t('no health probe here; no request yet');
    case 'unauthorized':
      return vscode.l10n.t('the API key is missing or refused');
    case 'error':
      return vscode.l10n.t('the server reports an error');
    case 'unreachable':
      return vscode.l10n.t('unreachable');
  }
}

/** What the status bar's text adds after the connection's name when its health is a problem (short: it is a status bar). */
const PROBLEM_WORDS: Partial<Record<Health['state'], () => string>> = {
  unauthorized: () => vscode.l10n.t('API key missing or refused'),
  error: () => vscode.l10n.t('server error'),
  unreachable: () => vscode.l10n.t('unreachable'),
};

/**
 * The running jobs the status bar counts: the one list of jobs (core views/jobList.ts), whose count the Jobs view's
 * badge shows too, so the badge and the status bar always say the same number.
 */
export interface RunningJobs {
  /** How many jobs of the active connection run now (queued, running, canceling, being submitted). */
  readonly runningCount: number;
  /** Fires with the new count whenever it changes. */
  readonly onDidChangeRunning: (listener: (count: number) => void) => { dispose(): void };
}

/** Options of {@link ConnectionStatus}. */
export interface ConnectionStatusOptions {
  /** The emulator child of this extension: a "Local emulator" connection it does not serve may be stale. */
  emulator?: Pick<EmulatorProcess, 'baseUrl' | 'onDidChange'>;
  /** The clock of the periodic health probe (tests inject a manual one). Default the system clock. */
  clock?: Clock;
  /** Time between health probes while the window has the focus, ms. Default 60 000. */
  healthIntervalMs?: number;
  /** Called with the connection's name each time a connection speaking the deprecated v1 API becomes active. */
  onV1Connection?: (name: string) => void;
}

/**
 * The status bar item of the active connection: its name and health (`GET /api/v2/health`
 * where the surface answers it, else the last request's outcome, core health.ts), a spinner and the count while jobs
 * run (the Jobs view's running jobs of the active connection: the very count of its badge, so the two always agree), a
 * tooltip and `accessibilityInformation` spelling out the
 * connection, its health and the running jobs. Clicking it runs {@link Commands.switchConnection}, or
 * {@link Commands.startEmulator} when the "Local emulator" connection is stale (its emulator died with an earlier
 * window: core {@link isStaleEmulatorConnection}). It follows the settings (a switch re-probes), stored keys (a new
 * key re-probes), and re-probes every minute while the window has the focus, at once when the focus returns after
 * longer (core {@link HealthSchedule}). {@link readiness} is what the welcome views and the walkthrough follow.
 */
export class ConnectionStatus extends Disposable {
  /** The item (tests read its text). */
  readonly item: vscode.StatusBarItem;
  private current: ActiveConnection | undefined;
  private configError: string | undefined;
  /** The active connection's health, from its probes and every request made on it (core {@link ConnectionHealth}). */
  private tracker = new ConnectionHealth(vscode.l10n.t);
  /** Whether an API key is stored for the active connection's origin (read at each probe and key change). */
  private hasKey = false;
  private probing: AbortController | undefined;
  private readonly schedule: HealthSchedule;
  private readonly changed: vscode.EventEmitter<void>;
  /** Fires after the item changed (name, health, readiness or running count). */
  readonly onDidChange: vscode.Event<void>;
  private readonly reconnected: vscode.EventEmitter<void>;
  /** Fires when the active connection answers again after it was unreachable or failing (not on a switch). */
  readonly onDidReconnect: vscode.Event<void>;
  /** Where the running count comes from: the Jobs view's badge (the active connection's running jobs). */
  private readonly running: RunningJobs;
  private readonly emulator: Pick<EmulatorProcess, 'baseUrl' | 'onDidChange'> | undefined;
  private readonly onV1Connection: ((name: string) => void) | undefined;

  constructor(
    private readonly config: Pick<Config, 'connection' | 'userConfigured' | 'onDidChange'>,
    private readonly keys: Pick<ApiKeys, 'get' | 'onDidChange'>,
    /** The running count: the Jobs view's, whose badge shows the same number. */
    running: RunningJobs,
    private readonly display: Display,
    options: ConnectionStatusOptions = {},
  ) {
    super();
    this.emulator = options.emulator;
    this.onV1Connection = options.onV1Connection;
    this.changed = this.register(new vscode.EventEmitter<void>());
    this.onDidChange = this.changed.event;
    this.reconnected = this.register(new vscode.EventEmitter<void>());
    this.onDidReconnect = this.reconnected.event;
    this.item = this.register(
      vscode.window.createStatusBarItem(StatusBarItems.connection, vscode.StatusBarAlignment.Left, 10),
    );
    this.item.name = vscode.l10n.t('Comfy Cloud Connection');
    this.item.command = Commands.switchConnection;
    this.running = running;
    this.register(running.onDidChangeRunning(() => this.render()));
    this.schedule = new HealthSchedule({
      probe: () => this.probe(),
      clock: options.clock ?? systemClock,
      intervalMs: options.healthIntervalMs,
      focused: vscode.window.state.focused,
    });
    this.register(this.schedule);
    this.register(vscode.window.onDidChangeWindowState((e) => this.schedule.setFocused(e.focused)));
    this.register(config.onDidChange(() => this.reload()));
    this.register(keys.onDidChange(() => this.probeNow()));
    if (this.emulator) this.register(this.emulator.onDidChange(() => this.probeNow()));
    this.register({ dispose: () => this.probing?.abort() });
    this.reload();
    this.item.show();
  }

  /** The active connection's name ('' while the settings are unusable). */
  get connectionName(): string {
    return this.current?.name ?? '';
  }

  /** The health last seen (undefined while the first probe runs). */
  get currentHealth(): Health | undefined {
    return this.tracker.health;
  }

  /** The active connection's running jobs (the Jobs view's badge). */
  get runningCount(): number {
    return this.running.runningCount;
  }

  /** Whether the active connection is the "Local emulator" and its emulator is gone (stopped, or every window closed). */
  get stale(): boolean {
    return isStaleEmulatorConnection(
      this.current,
      EMULATOR_CONNECTION_NAME,
      this.emulator?.baseUrl,
      this.tracker.health?.state,
    );
  }

  /** The active connection as last read from the settings; undefined while they are unusable. */
  get active(): ActiveConnection | undefined {
    return this.current;
  }

  /** How usable the active connection is (core {@link connectionReadiness}): the welcome views follow it. */
  get readiness(): ConnectionReadiness {
    return connectionReadiness({
      active: this.current,
      hasKey: this.hasKey,
      configured: this.config.userConfigured(),
      health: this.tracker.health?.state,
      staleEmulator: this.stale,
    });
  }

  /**
   * A request's outcome (from the clients), for the active connection's requests only: any answer of the server
   * shows it reachable at once (a watch reading a job's end after an outage turns the item back from "unreachable"
   * there and then); where the surface has no probe it is the health; no answer or a 5xx probes now (core
   * {@link ConnectionHealth}).
   */
  requestDone(entry: RequestLogEntry): void {
    const base = this.current?.surface.baseUrl;
    if (!base || !(entry.url === base || entry.url.startsWith(`${base}/`))) return;
    const change = this.tracker.requestDone(entry);
    this.healthChanged(change);
    if (change.probe) this.probeNow();
  }

  /** Re-reads the active connection and probes it. */
  private reload(): void {
    const before = this.current?.surface.baseUrl;
    try {
      this.current = this.config.connection();
      this.configError = undefined;
    } catch (err) {
      this.current = undefined;
      this.configError = err instanceof Error ? err.message : String(err);
    }
    if (this.current?.surface.baseUrl !== before) {
      if (this.current && isDeprecatedApi(this.current.api)) this.onV1Connection?.(this.current.name);
      this.tracker = new ConnectionHealth(vscode.l10n.t);
      this.probeNow();
    }
    this.render();
  }

  /** A probe for a reason of its own (a switch, a key, a failed request): the periodic one restarts its period. */
  private probeNow(): void {
    this.schedule.noteProbe();
    void this.probe();
  }

  /** Probes the active connection (a newer probe aborts an older one). Never rejects. */
  async probe(): Promise<void> {
    this.probing?.abort();
    const active = this.current;
    if (!active) return;
    const controller = new AbortController();
    this.probing = controller;
    let apiKey: string | undefined;
    try {
      apiKey = await this.keys.get(active.surface.origin);
    } catch {
      apiKey = undefined;
    }
    if (controller.signal.aborted || this.current !== active) return;
    this.hasKey = Boolean(apiKey);
    // The key's presence decides the welcome view at once; the probe may take its timeout.
    this.render();
    const tracker = this.tracker;
    const ticket = tracker.probeStarted();
    const health = await probeHealth({
      baseUrl: active.surface.baseUrl,
      path: healthPathOf(active.api),
      apiKey,
      signal: controller.signal,
      t: vscode.l10n.t,
    });
    if (controller.signal.aborted || this.current !== active || this.tracker !== tracker) return;
    this.healthChanged(tracker.probeDone(ticket, health));
  }

  /** A changed health is shown; a connection that was down and answers again is told ({@link onDidReconnect}). */
  private healthChanged(change: HealthChange): void {
    if (!change.changed) return;
    this.render();
    if (change.health && isReconnect(change.before, change.health.state)) this.reconnected.fire();
  }

  /** A tooltip of several lines: each made safe on its own (the display escapes a newline inside one). */
  private lines(...lines: string[]): string {
    return lines.map((line) => this.display.text(line)).join('\n');
  }

  private render(): void {
    this.paint();
    this.changed.fire();
  }

  private paint(): void {
    const n = this.running.runningCount;
    const jobs =
      n === 0
        ? vscode.l10n.t('no jobs running')
        : n === 1
          ? vscode.l10n.t('1 job running')
          : vscode.l10n.t('{0} jobs running', n);
    const item = this.item;
    item.command = Commands.switchConnection;
    if (!this.current) {
      item.text = '$(error) Comfy Cloud';
      item.tooltip = this.lines(
        vscode.l10n.t('Comfy Cloud: the connection settings are not usable.'),
        this.configError ?? '',
        '',
        vscode.l10n.t('Click to choose a connection.'),
      );
      item.accessibilityInformation = {
        label: this.display.text(vscode.l10n.t('Comfy Cloud: the connection settings are not usable; {0}', jobs)),
        role: 'button',
      };
      item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
      return;
    }
    const { name, kind, surface, api } = this.current;
    const health = this.tracker.health;
    const count = n > 0 ? ` ${n}` : '';
    if (this.stale) {
      // Its emulator stopped (the last window closed, or it was stopped): one click starts it again.
      item.text = `$(debug-disconnect) ${this.display.text(vscode.l10n.t('{0} (stopped)', name))}${count}`;
      item.tooltip = this.lines(
        vscode.l10n.t('Comfy Cloud connection: {0}', name),
        surface.baseUrl,
        vscode.l10n.t('The local emulator it points at is not running (stopped, or every window was closed).'),
        '',
        vscode.l10n.t('Click to start the local emulator again.'),
      );
      item.accessibilityInformation = {
        label: this.display.text(
          vscode.l10n.t(
            'Comfy Cloud connection {0}, stopped: its local emulator is not running; {1}. Activate to start the local emulator.',
            name,
            jobs,
          ),
        ),
        role: 'button',
      };
      item.command = Commands.startEmulator;
      item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
      return;
    }
    const icon = n > 0 ? '$(sync~spin)' : health ? '$(cloud)' : '$(loading~spin)';
    // What it is and how it is, in words (a colour is never the only sign): "Default" alone says neither.
    const shownName = kind === 'default' ? vscode.l10n.t('Comfy Cloud: {0}', name) : name;
    const problem = health ? PROBLEM_WORDS[health.state]?.() : undefined;
    item.text = `${icon} ${this.display.text(problem ? `${shownName} — ${problem}` : shownName)}${count}`;
    const words = health ? healthWords(health.state) : vscode.l10n.t('checking…');
    const where = kind === 'default' ? 'comfyCloud.baseUrl' : kind;
    const detail = health ? ` (${health.detail})` : '';
    // A v1 connection says so, and how to move (Cloud API v1 (deprecated), Versioning).
    const v1 = isDeprecatedApi(api)
      ? vscode.l10n.t('API: v1 (deprecated; to move to v2, remove "api": "v1" from it in comfyCloud.connections)')
      : undefined;
    // Another API not deprecated is named (e.g. "API: ComfyUI server"); v2, the default, goes unsaid.
    const named = v1 ? undefined : apiWords(api);
    const apiLine = v1 ?? (named ? vscode.l10n.t('API: {0}', named) : undefined);
    // Where a key is always needed (the cloud, a deployment), whether one is set.
    const keyLine = needsApiKey(this.current)
      ? this.hasKey
        ? vscode.l10n.t('API key: set')
        : vscode.l10n.t('API key: not set')
      : undefined;
    item.tooltip = this.lines(
      vscode.l10n.t('Comfy Cloud connection: {0} ({1})', name, where),
      surface.baseUrl,
      ...(apiLine ? [apiLine] : []),
      ...(keyLine ? [keyLine] : []),
      vscode.l10n.t('Health: {0}{1}', words, detail),
      jobs,
      '',
      vscode.l10n.t('Click to switch connection, add one, set the API key, or start the local emulator.'),
    );
    const label = v1
      ? vscode.l10n.t('Comfy Cloud connection {0}, v1 API (deprecated), {1}, {2}', name, words, jobs)
      : named
        ? vscode.l10n.t('Comfy Cloud connection {0}, {1}, {2}, {3}', name, named, words, jobs)
        : vscode.l10n.t('Comfy Cloud connection {0}, {1}, {2}', name, words, jobs);
    item.accessibilityInformation = { label: this.display.text(label), role: 'button' };
    item.backgroundColor =
      health?.state === 'unreachable' || health?.state === 'error' || health?.state === 'unauthorized'
        ? new vscode.ThemeColor('statusBarItem.warningBackground')
        : undefined;
  }
}
