import * as vscode from 'vscode';
import { SECRET_PREFIX } from './constants';

/**
 * API keys in SecretStorage, one per origin (scheme + authority of the base URL), so a key set for one server
 * is never sent to another. Never in settings, never logged.
 */
export class ApiKeys {
  constructor(private readonly secrets: vscode.SecretStorage) {}

  /** The key stored for `origin`, or undefined. */
  get(origin: string): Thenable<string | undefined> {
    return this.secrets.get(SECRET_PREFIX + origin);
  }

  set(origin: string, key: string): Thenable<void> {
    return this.secrets.store(SECRET_PREFIX + origin, key);
  }

  clear(origin: string): Thenable<void> {
    return this.secrets.delete(SECRET_PREFIX + origin);
  }

  /** Fires when any stored key changes. */
  get onDidChange(): vscode.Event<vscode.SecretStorageChangeEvent> {
    return this.secrets.onDidChange;
  }
}
