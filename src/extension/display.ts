import * as vscode from 'vscode';
import type { Redactor } from '../core';

/** What a progress notification reports. */
export interface ProgressStep {
  message?: string;
  increment?: number;
}

/**
 * The one place where the extension makes text safe to show (server data is untrusted): every notification,
 * progress message, quick-pick entry and diagnostic built from server-chosen
 * strings (error codes and messages, a job's error, progress messages and node classes, job ids and statuses)
 * passes here, and is redacted (the user's API keys, through the core {@link Redactor} the log shares) and
 * neutralized (control, bidi and invisible characters shown escaped). Button labels are ours and are kept as is.
 */
export class Display {
  constructor(private readonly redactor: Redactor) {}

  /** `text` redacted and neutralized, on one line. */
  text(text: string): string {
    return this.redactor.clean(text);
  }

  error(message: string, ...actions: string[]): Thenable<string | undefined> {
    return vscode.window.showErrorMessage(this.text(message), ...actions);
  }

  warning(message: string, ...actions: string[]): Thenable<string | undefined> {
    return vscode.window.showWarningMessage(this.text(message), ...actions);
  }

  info(message: string, ...actions: string[]): Thenable<string | undefined> {
    return vscode.window.showInformationMessage(this.text(message), ...actions);
  }

  /** Reports a progress step with its message made safe. */
  report(progress: vscode.Progress<ProgressStep>, step: ProgressStep): void {
    progress.report(step.message === undefined ? step : { ...step, message: this.text(step.message) });
  }
}
