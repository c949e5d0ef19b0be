import * as vscode from 'vscode';
import type { Redactor } from '../../core/util';
import { toastText } from './toastText';

/** What a progress notification reports. */
export interface ProgressStep {
  message?: string;
  increment?: number;
}

/** A notification as shown (tests and views read it through {@link Display.onDidShow}). */
export interface ShownNotice {
  severity: 'info' | 'warning' | 'error' | 'lasting';
  /** The text shown: redacted, neutralized, starting with "Comfy Cloud:". */
  message: string;
  /** Its buttons' labels (none for a `lasting` notice). */
  actions: string[];
  /** For a `lasting` notice: settles once it is closed (its `until` settled, or the user closed it). */
  closed?: Promise<void>;
}

/** A notice shown by {@link Display.lasting}: `close()` takes it down (idempotent); `closed` settles once it is down. */
export interface LastingNotice {
  readonly message: string;
  readonly closed: Promise<void>;
  close(): void;
}

/**
 * The one place where the extension makes text safe to show (server data is untrusted): every notification,
 * progress message, quick-pick entry and diagnostic built from server-chosen
 * strings (error codes and messages, a job's error, progress messages and node classes, job ids and statuses)
 * passes here, and is redacted (the user's API keys, through the core {@link Redactor} the log shares) and
 * neutralized (control, bidi and invisible characters shown escaped). Button labels are ours and are kept as is.
 * Every notification starts with "Comfy Cloud:" (toastText.ts), and each is told on {@link onDidShow}.
 */
export class Display {
  private readonly shown = new vscode.EventEmitter<ShownNotice>();
  /** Fires with each notification shown through this object (tests read it; nothing is kept). */
  readonly onDidShow = this.shown.event;

  constructor(private readonly redactor: Redactor) {}

  /** `text` redacted and neutralized, on one line. */
  text(text: string): string {
    return this.redactor.clean(text);
  }

  error(message: string, ...actions: string[]): Thenable<string | undefined> {
    return vscode.window.showErrorMessage(this.told('error', message, actions), ...actions);
  }

  warning(message: string, ...actions: string[]): Thenable<string | undefined> {
    return vscode.window.showWarningMessage(this.told('warning', message, actions), ...actions);
  }

  info(message: string, ...actions: string[]): Thenable<string | undefined> {
    return vscode.window.showInformationMessage(this.told('info', message, actions), ...actions);
  }

  /**
   * A notification that closes itself once it is stale: VS Code closes a notification only when it is a progress
   * notification whose task ended, so this is one (no buttons; a finished bar rather than a busy one unless `busy`).
   * It closes when `until` settles, when {@link LastingNotice.close} is called, or when the user presses its Close
   * button (`closable`, default true).
   */
  lasting(
    message: string,
    until: PromiseLike<unknown> | undefined,
    options: { busy?: boolean; closable?: boolean } = {},
  ): LastingNotice {
    const text = this.told('lasting', message, []);
    let close!: () => void;
    const down = new Promise<void>((resolve) => (close = resolve));
    void until?.then(close, close);
    const closed = Promise.resolve(
      vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: text, cancellable: options.closable !== false },
        (progress, token) => {
          // A full bar: the notice is a statement, not work under way.
          if (!options.busy) progress.report({ increment: 100 });
          token.onCancellationRequested(close);
          return down;
        },
      ),
    );
    this.shown.fire({ severity: 'lasting', message: text, actions: [], closed });
    return { message: text, closed, close };
  }

  /** Reports a progress step with its message made safe. */
  report(progress: vscode.Progress<ProgressStep>, step: ProgressStep): void {
    progress.report(step.message === undefined ? step : { ...step, message: this.text(step.message) });
  }

  /** The text shown: safe, with the product name; told on onDidShow (a lasting notice is told with its `closed`). */
  private told(severity: ShownNotice['severity'], message: string, actions: string[]): string {
    const text = toastText(this.text(message), vscode.l10n.t);
    if (severity !== 'lasting') this.shown.fire({ severity, message: text, actions });
    return text;
  }
}
