import * as vscode from 'vscode';
import { DEFAULT_CONCURRENCY } from '../../core/batch';
import {
  DEFAULT_DEPLOYMENT_DOMAIN,
  resolveConnection,
  upsertConnection,
  type ActiveConnection,
  type ConnectionEntry,
  type Surface,
} from '../../core/connection';
import { DEFAULT_SETTLE_MS, InputError } from '../../core';
import { CONFIG_SECTION, DEFAULT_BASE_URL, Settings } from './constants';

/** The origin of an http(s) `url` (the model router's: its key is stored per origin), or undefined when it is not one. */
export function routerOrigin(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The extension's settings: the one module that reads and writes them (every other module asks here, a unit test
 * checks it). `comfyCloud.baseUrl`, `comfyCloud.connections`, `comfyCloud.activeConnection` and
 * `comfyCloud.nodeDefinitionsUrl` are machine-scoped and read here from the user's own (global) values only: a cloned
 * repository's workspace settings can never choose where the user's API key is sent.
 */
export class Config {
  private section(): vscode.WorkspaceConfiguration {
    return vscode.workspace.getConfiguration(CONFIG_SECTION);
  }

  /** A machine-scoped setting's user value (the workspace's is never read), else its default. */
  private user<T>(key: string, fallback: T): T {
    const inspected = this.section().inspect<T>(key);
    return inspected?.globalValue ?? inspected?.defaultValue ?? fallback;
  }

  /**
   * The active connection: `comfyCloud.activeConnection` names one of
   * `comfyCloud.connections`; empty, it is the default connection made of `comfyCloud.baseUrl`. A deployment's URL is
   * built under {@link deploymentDomain}.
   * @throws InputError `bad_base_url`, `bad_connection`, `unknown_connection`, `bad_deployment_domain` (core
   *   connections.ts).
   */
  connection(): ActiveConnection {
    const active = this.user<unknown>(Settings.activeConnection, '');
    try {
      return resolveConnection(
        this.user<unknown>(Settings.connections, []),
        typeof active === 'string' ? active : '',
        this.defaultBaseUrl(),
        this.deploymentDomain(),
      );
    } catch (err) {
      if (InputError.is(err) && err.code === 'bad_base_url')
        throw new InputError(err.code, `Setting comfyCloud.baseUrl: ${err.message}`);
      throw err;
    }
  }

  /** The active connection's base URL and the surface it implies: every request goes there. @throws as {@link connection}. */
  surface(): Surface {
    return this.connection().surface;
  }

  /** The default connection's base URL: the user's `comfyCloud.baseUrl` as written (unchecked). */
  defaultBaseUrl(): string {
    return String(this.user<unknown>(Settings.baseUrl, DEFAULT_BASE_URL));
  }

  /**
   * `comfyCloud.deploymentDomain`: the domain serverless deployments are hosts under (`run.comfy.app`, staging
   * `stg.run.comfy.app`), the user's own value only (machine scope, like every address a key is sent to); unchecked.
   */
  deploymentDomain(): string {
    const value = this.user<unknown>(Settings.deploymentDomain, DEFAULT_DEPLOYMENT_DOMAIN);
    return typeof value === 'string' && value.trim() !== '' ? value : DEFAULT_DEPLOYMENT_DOMAIN;
  }

  /** The user's `comfyCloud.connections`, unchecked (entries are checked when resolved). */
  connectionsRaw(): unknown {
    return this.user<unknown>(Settings.connections, []);
  }

  /**
   * Adds `entry` to the user's connections (replacing one of the same name) and makes it active.
   * @throws InputError `bad_connection` when the list or the entry is bad; `bad_deployment_domain`.
   */
  async addConnection(entry: ConnectionEntry): Promise<void> {
    const list = upsertConnection(this.connectionsRaw(), entry, this.deploymentDomain());
    await this.section().update(Settings.connections, list, vscode.ConfigurationTarget.Global);
    await this.setActiveConnection(entry.name.trim());
  }

  /** Makes the connection `name` active ('' for the default one) in the user's settings. */
  async setActiveConnection(name: string): Promise<void> {
    await this.section().update(Settings.activeConnection, name, vscode.ConfigurationTarget.Global);
  }

  /**
   * Whether the user configured a server: a connection, an active name, or their own `comfyCloud.baseUrl` (user
   * values only, as {@link connection} reads them).
   */
  userConfigured(): boolean {
    const config = this.section();
    const user = (key: string): unknown => config.inspect(key)?.globalValue;
    const list = user(Settings.connections);
    return (
      user(Settings.baseUrl) !== undefined ||
      (Array.isArray(list) && list.length > 0) ||
      Boolean(user(Settings.activeConnection))
    );
  }

  /** `comfyCloud.outputDirectory`, or '' for the default place. */
  outputDirectory(): string {
    return this.section().get<string>(Settings.outputDirectory, '').trim();
  }

  /** `comfyCloud.notifyOnJobEnd` (default true): the end-of-job notification. */
  notifyOnJobEnd(): boolean {
    return this.section().get<boolean>(Settings.notifyOnJobEnd, true) !== false;
  }

  /** `comfyCloud.openMonitorOnSubmit` (default true): a submission opens the job's monitor. */
  openMonitorOnSubmit(): boolean {
    return this.section().get<boolean>(Settings.openMonitorOnSubmit, true) !== false;
  }

  /** `comfyCloud.monitor.reuseTab` (default true): a new job's monitor takes the tab of the one shown unless it is pinned. */
  monitorReuseTab(): boolean {
    return this.section().get<boolean>(Settings.monitorReuseTab, true) !== false;
  }

  /**
   * `comfyCloud.batch.concurrency`: jobs of one batch in flight at once, a whole number from 1 to 64 (default 4; any
   * other value reads as the default).
   */
  batchConcurrency(): number {
    const n = this.section().get<number>(Settings.batchConcurrency, DEFAULT_CONCURRENCY);
    return Number.isInteger(n) && n >= 1 && n <= 64 ? n : DEFAULT_CONCURRENCY;
  }

  /**
   * `comfyCloud.emulator.nodeDelayMs`: the local emulator's delay per executed node, a whole number of ms from 0 to
   * 60 000 (default 0; any other value reads as 0). Read when the emulator starts.
   */
  emulatorNodeDelayMs(): number {
    const n = this.section().get<number>(Settings.emulatorNodeDelayMs, 0);
    return Number.isInteger(n) && n >= 0 && n <= 60_000 ? n : 0;
  }

  /**
   * `comfyCloud.unknownOutcomeSettleSeconds` as ms: the settle window of an unknown outcome's resolution (core/jobs/
   * unknownOutcome.ts), a number of seconds from 0.1 to 600 (default 3; any other value reads as the default).
   */
  unknownOutcomeSettleMs(): number {
    const s = this.section().get<number>(Settings.unknownOutcomeSettleSeconds, DEFAULT_SETTLE_MS / 1000);
    return typeof s === 'number' && Number.isFinite(s) && s >= 0.1 && s <= 600
      ? Math.round(s * 1000)
      : DEFAULT_SETTLE_MS;
  }

  /** `comfyCloud.routerUrl`, the model router's base URL, trimmed ('' when unset). Machine scope: VS Code applies no workspace value. */
  routerUrl(): string {
    return (this.section().get<string>(Settings.routerUrl) ?? '').trim();
  }

  /** The origin of {@link routerUrl}, or undefined when it is unset or not an http(s) URL. */
  routerOrigin(): string | undefined {
    return routerOrigin(this.routerUrl());
  }

  /** Sets `comfyCloud.routerUrl` in the user's settings. */
  async setRouterUrl(url: string): Promise<void> {
    await this.section().update(Settings.routerUrl, url, vscode.ConfigurationTarget.Global);
  }

  /**
   * `comfyCloud.nodeDefinitionsUrl`: a local engine whose node definitions workflow IntelliSense uses, the user's own
   * value only (a workspace's could point the checks at a server of its choosing); undefined when unset.
   */
  nodeDefinitionsUrl(): string | undefined {
    return this.section().inspect<string>(Settings.nodeDefinitionsUrl)?.globalValue;
  }

  /**
   * Fires when a setting of this extension changes; with `settings` (keys of {@link Settings}), only when one of them
   * does.
   */
  onDidChange(listener: () => void, ...settings: Array<(typeof Settings)[keyof typeof Settings]>): vscode.Disposable {
    const sections = settings.length > 0 ? settings.map((key) => `${CONFIG_SECTION}.${key}`) : [CONFIG_SECTION];
    return vscode.workspace.onDidChangeConfiguration((e) => {
      if (sections.some((section) => e.affectsConfiguration(section))) listener();
    });
  }
}
