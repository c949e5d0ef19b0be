import * as vscode from 'vscode';
import { InputError, resolveConnection, upsertConnection, type ActiveConnection, type ConnectionEntry, type Surface } from '../core';
import { CONFIG_SECTION, DEFAULT_BASE_URL, Settings } from './constants';

/**
 * The extension's settings. `comfyCloud.baseUrl`, `comfyCloud.connections` and `comfyCloud.activeConnection` are
 * machine-scoped and read here from the user's own (global) values only: a cloned repository's workspace settings can
 * never choose where the user's API key is sent.
 */
export class Config {
  /** A machine-scoped setting's user value (the workspace's is never read), else its default. */
  private user<T>(key: string, fallback: T): T {
    const inspected = vscode.workspace.getConfiguration(CONFIG_SECTION).inspect<T>(key);
    return inspected?.globalValue ?? inspected?.defaultValue ?? fallback;
  }

  /**
   * The active connection: `comfyCloud.activeConnection` names one of
   * `comfyCloud.connections`; empty, it is the default connection made of `comfyCloud.baseUrl`.
   * @throws InputError `bad_base_url`, `bad_connection`, `unknown_connection` (core connections.ts).
   */
  connection(): ActiveConnection {
    const active = this.user<unknown>(Settings.activeConnection, '');
    try {
      return resolveConnection(this.user<unknown>(Settings.connections, []), typeof active === 'string' ? active : '', this.defaultBaseUrl());
    } catch (err) {
      if (InputError.is(err) && err.code === 'bad_base_url') throw new InputError(err.code, `Setting comfyCloud.baseUrl: ${err.message}`);
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

  /** The user's `comfyCloud.connections`, unchecked (entries are checked when resolved). */
  connectionsRaw(): unknown {
    return this.user<unknown>(Settings.connections, []);
  }

  /**
   * Adds `entry` to the user's connections (replacing one of the same name) and makes it active.
   * @throws InputError `bad_connection` when the list or the entry is bad.
   */
  async addConnection(entry: ConnectionEntry): Promise<void> {
    const list = upsertConnection(this.connectionsRaw(), entry);
    const config = vscode.workspace.getConfiguration(CONFIG_SECTION);
    await config.update(Settings.connections, list, vscode.ConfigurationTarget.Global);
    await this.setActiveConnection(entry.name.trim());
  }

  /** Makes the connection `name` active ('' for the default one) in the user's settings. */
  async setActiveConnection(name: string): Promise<void> {
    await vscode.workspace.getConfiguration(CONFIG_SECTION).update(Settings.activeConnection, name, vscode.ConfigurationTarget.Global);
  }

  /** `comfyCloud.outputDirectory`, or '' for the default place. */
  outputDirectory(): string {
    return vscode.workspace.getConfiguration(CONFIG_SECTION).get<string>(Settings.outputDirectory, '').trim();
  }

  /** Fires when a setting of this extension changes. */
  onDidChange(listener: () => void): vscode.Disposable {
    return vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(CONFIG_SECTION)) listener();
    });
  }
}
