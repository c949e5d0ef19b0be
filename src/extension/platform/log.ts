import * as vscode from 'vscode';
import type { Redactor } from '../../core/util';
import type { RequestLogEntry } from '../../core/http';
import { LOG_CHANNEL } from './constants';
import { Disposable } from './disposable';

/**
 * The "Comfy Cloud" LogOutputChannel. Every line has a component tag; request lines carry the request id.
 * Secrets never reach it: the transport logs no header and redacts a foreign origin's query, and every line passes
 * through the core {@link Redactor} (which knows the user's API keys) and is neutralized, so a server's message cannot
 * echo a key into the log nor forge a line with a newline or control characters.
 */
export class Log extends Disposable {
  readonly channel: vscode.LogOutputChannel;

  constructor(private readonly redactor: Redactor) {
    super();
    this.channel = this.register(vscode.window.createOutputChannel(LOG_CHANNEL, { log: true }));
  }

  info(component: string, message: string): void {
    this.channel.info(this.line(component, message));
  }

  warn(component: string, message: string): void {
    this.channel.warn(this.line(component, message));
  }

  error(component: string, message: string): void {
    this.channel.error(this.line(component, message));
  }

  /** One line per HTTP request: method, redacted URL, status or error, duration, request id. */
  request(entry: RequestLogEntry): void {
    const outcome = entry.status !== undefined ? String(entry.status) : `failed (${entry.error})`;
    const id = entry.requestId ? ` request-id=${entry.requestId}` : '';
    const line = this.line('http', `${entry.method} ${entry.url} → ${outcome} in ${entry.durationMs} ms${id}`);
    if (entry.status !== undefined && entry.status < 400) this.channel.debug(line);
    else this.channel.warn(line);
  }

  show(): void {
    this.channel.show(true);
  }

  /** `[component] message`, redacted then neutralized (one line whatever the message holds). */
  private line(component: string, message: string): string {
    return this.redactor.clean(`[${component}] ${message}`);
  }
}
