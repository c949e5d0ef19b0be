import * as vscode from 'vscode';
import { InputError, surfaceFromBaseUrl, type Surface } from '../core';
import { CONFIG_SECTION, DEFAULT_BASE_URL, Settings } from './constants';

/**
 * The extension's settings. `comfyCloud.baseUrl` is machine-scoped and read here from the user's own (global)
 * value only: a cloned repository's workspace settings can never choose where the user's API key is sent.
 */
export class Config {
  /** The configured base URL and the surface it implies. @throws InputError `bad_base_url`. */
  surface(): Surface {
    const inspected = vscode.workspace.getConfiguration(CONFIG_SECTION).inspect<string>(Settings.baseUrl);
    const value = inspected?.globalValue ?? inspected?.defaultValue ?? DEFAULT_BASE_URL;
    try {
      return surfaceFromBaseUrl(value);
    } catch (err) {
      if (InputError.is(err)) throw new InputError(err.code, `Setting comfyCloud.baseUrl: ${err.message}`);
      throw err;
    }
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
