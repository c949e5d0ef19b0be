import * as vscode from 'vscode';
import type { Redactor } from '../../core/util';
import { SECRET_PREFIX } from './constants';

/**
 * API keys in SecretStorage, one per origin (scheme + authority of the base URL), so a key set for one server
 * is never sent to another. Never in settings, never logged: every key read, set, or changed (from another window)
 * is handed to the {@link Redactor} that the log and the notifications share, so a server echoing it is redacted.
 */
export class ApiKeys {
  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly redactor: Redactor,
  ) {}

  /** The key stored for `origin`, or undefined. */
  get(origin: string): Thenable<string | undefined> {
    return this.secrets.get(SECRET_PREFIX + origin).then((key) => {
      this.redactor.add(key);
      return key;
    });
  }

  set(origin: string, key: string): Thenable<void> {
    // Known to the redactor before anything can echo it.
    this.redactor.add(key);
    return this.secrets.store(SECRET_PREFIX + origin, key);
  }

  clear(origin: string): Thenable<void> {
    return this.secrets.delete(SECRET_PREFIX + origin);
  }

  /** Fires when any stored key changes. */
  get onDidChange(): vscode.Event<vscode.SecretStorageChangeEvent> {
    return this.secrets.onDidChange;
  }

  /** Teaches the redactor every key that another window sets or changes. Dispose to stop. */
  learnChanges(): vscode.Disposable {
    return this.secrets.onDidChange((e) => {
      if (!e.key.startsWith(SECRET_PREFIX)) return;
      this.secrets.get(e.key).then(
        (key) => this.redactor.add(key),
        () => undefined,
      );
    });
  }
}
