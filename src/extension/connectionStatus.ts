import * as vscode from 'vscode';
import { isTerminalStatus, healthFromRequest, probeHealth, type ActiveConnection, type Health, type RequestLogEntry } from '../core';
import type { Config } from './config';
import { Commands, StatusBarItems } from './constants';
import { Disposable } from './disposable';
import type { Display } from './display';
import type { JobServiceHost } from './jobService';
import type { ApiKeys } from './secrets';

/** Words for each health state, in the tooltip and for screen readers. */
const HEALTH_WORDS: Record<Health['state'], string> = {
  ok: 'reachable',
  unsupported: 'no health probe here; no request yet',
  unauthorized: 'the API key is missing or refused',
  error: 'the server reports an error',
  unreachable: 'unreachable',
};

const HEALTH_ICON: Record<Health['state'], string> = {
  ok: '$(cloud)',
  unsupported: '$(cloud)',
  unauthorized: '$(key)',
  error: '$(warning)',
  unreachable: '$(debug-disconnect)',
};

/**
 * The status bar item of the active connection (issue 9, "Connections"): its name and health (`GET /api/v2/health`
 * where the surface answers it, else the last request's outcome, core health.ts), a spinner and the count while jobs
 * run (from the job service's `onDidChangeJob`), a tooltip and `accessibilityInformation`. Clicking it runs
 * {@link Commands.switchConnection}. It follows the settings (a switch re-probes) and stored keys (a new key
 * re-probes).
 */
export class ConnectionStatus extends Disposable {
  /** The item (tests read its text). */
  readonly item: vscode.StatusBarItem;
  private active: ActiveConnection | undefined;
  private configError: string | undefined;
  private health: Health | undefined;
  /** Whether the active connection answers the probe (undefined until known). */
  private probeServed: boolean | undefined;
  private probing: AbortController | undefined;
  private readonly changed: vscode.EventEmitter<void>;
  /** Fires after the item changed (name, health or running count). */
  readonly onDidChange: vscode.Event<void>;
  /** Jobs not yet terminal, by `${baseUrl} ${id}` (jobs of two servers never mix). */
  private readonly running = new Set<string>();

  constructor(
    private readonly config: Config,
    private readonly keys: ApiKeys,
    jobs: JobServiceHost,
    private readonly display: Display,
  ) {
    super();
    this.changed = this.register(new vscode.EventEmitter<void>());
    this.onDidChange = this.changed.event;
    this.item = this.register(vscode.window.createStatusBarItem(StatusBarItems.connection, vscode.StatusBarAlignment.Left, 10));
    this.item.name = 'Comfy Cloud Connection';
    this.item.command = Commands.switchConnection;
    this.register(
      jobs.onDidChangeJob(({ baseUrl, job }) => {
        const key = `${baseUrl} ${job.id}`;
        const had = this.running.has(key);
        if (isTerminalStatus(job.status)) this.running.delete(key);
        else this.running.add(key);
        if (had !== this.running.has(key)) this.render();
      }),
    );
    this.register(config.onDidChange(() => this.reload()));
    this.register(keys.onDidChange(() => void this.probe()));
    this.register({ dispose: () => this.probing?.abort() });
    this.reload();
    this.item.show();
  }

  /** The active connection's name ('' while the settings are unusable). */
  get connectionName(): string {
    return this.active?.name ?? '';
  }

  /** The health last seen (undefined while the first probe runs). */
  get currentHealth(): Health | undefined {
    return this.health;
  }

  /** Jobs of any connection that are not yet terminal. */
  get runningCount(): number {
    return this.running.size;
  }

  /** A request's outcome (from the clients): the health where the surface has no probe; a failure re-probes. */
  requestDone(entry: RequestLogEntry): void {
    const base = this.active?.surface.baseUrl;
    if (!base || !(entry.url === base || entry.url.startsWith(`${base}/`))) return;
    const health = healthFromRequest(entry);
    if (this.probeServed === false) {
      this.health = health;
      this.render();
    } else if (health.state === 'unreachable' || health.state === 'error') {
      void this.probe();
    }
  }

  /** Re-reads the active connection and probes it. */
  private reload(): void {
    const before = this.active?.surface.baseUrl;
    try {
      this.active = this.config.connection();
      this.configError = undefined;
    } catch (err) {
      this.active = undefined;
      this.configError = err instanceof Error ? err.message : String(err);
    }
    if (this.active?.surface.baseUrl !== before) {
      this.health = undefined;
      this.probeServed = undefined;
      void this.probe();
    }
    this.render();
  }

  /** Probes the active connection (a newer probe aborts an older one). Never rejects. */
  async probe(): Promise<void> {
    this.probing?.abort();
    const active = this.active;
    if (!active) return;
    const controller = new AbortController();
    this.probing = controller;
    let apiKey: string | undefined;
    try {
      apiKey = await this.keys.get(active.surface.origin);
    } catch {
      apiKey = undefined;
    }
    const health = await probeHealth({ baseUrl: active.surface.baseUrl, apiKey, signal: controller.signal });
    if (controller.signal.aborted || this.active !== active) return;
    this.probeServed = health.state !== 'unsupported';
    // Where the probe is not served, a request seen since keeps its word.
    if (this.probeServed || !this.health) this.health = health;
    this.render();
  }

  private render(): void {
    this.paint();
    this.changed.fire();
  }

  private paint(): void {
    const n = this.running.size;
    const jobs = n > 0 ? `, ${n} job${n === 1 ? '' : 's'} running` : '';
    const item = this.item;
    if (!this.active) {
      item.text = '$(error) Comfy Cloud';
      item.tooltip = this.display.text(`Comfy Cloud: the connection settings are not usable.\n${this.configError ?? ''}\n\nClick to choose a connection.`);
      item.accessibilityInformation = { label: `Comfy Cloud: the connection settings are not usable${jobs}`, role: 'button' };
      item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
      return;
    }
    const { name, kind, surface } = this.active;
    const health = this.health;
    const icon = n > 0 ? '$(sync~spin)' : health ? HEALTH_ICON[health.state] : '$(loading~spin)';
    item.text = `${icon} ${this.display.text(name)}${n > 0 ? ` ${n}` : ''}`;
    const words = health ? HEALTH_WORDS[health.state] : 'checking…';
    item.tooltip = this.display.text(
      `Comfy Cloud connection: ${name} (${kind === 'default' ? 'comfyCloud.baseUrl' : kind})\n${surface.baseUrl}\nHealth: ${words}${health ? ` (${health.detail})` : ''}${jobs ? `\n${jobs.slice(2)}` : ''}\n\nClick to switch connection, add one, set the API key, or start the local emulator.`,
    );
    item.accessibilityInformation = { label: this.display.text(`Comfy Cloud connection ${name}, ${words}${jobs}`), role: 'button' };
    item.backgroundColor =
      health?.state === 'unreachable' || health?.state === 'error' || health?.state === 'unauthorized' ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
  }
}
