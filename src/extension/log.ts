import * as vscode from 'vscode';
import type { RequestLogEntry } from '../core';
import { LOG_CHANNEL } from './constants';

/**
 * The "Comfy Cloud" LogOutputChannel. Every line has a component tag; request lines carry the request id.
 * Secrets never reach it: the transport logs no header, and redacts a foreign origin's query.
 */
export class Log implements vscode.Disposable {
  readonly channel: vscode.LogOutputChannel;

  constructor() {
    this.channel = vscode.window.createOutputChannel(LOG_CHANNEL, { log: true });
  }

  info(component: string, message: string): void {
    this.channel.info(`[${component}] ${message}`);
  }

  warn(component: string, message: string): void {
    this.channel.warn(`[${component}] ${message}`);
  }

  error(component: string, message: string): void {
    this.channel.error(`[${component}] ${message}`);
  }

  /** One line per HTTP request: method, redacted URL, status or error, duration, request id. */
  request(entry: RequestLogEntry): void {
    const outcome = entry.status !== undefined ? String(entry.status) : `failed (${entry.error})`;
    const id = entry.requestId ? ` request-id=${entry.requestId}` : '';
    const line = `[http] ${entry.method} ${entry.url} → ${outcome} in ${entry.durationMs} ms${id}`;
    if (entry.status !== undefined && entry.status < 400) this.channel.debug(line);
    else this.channel.warn(line);
  }

  show(): void {
    this.channel.show(true);
  }

  dispose(): void {
    this.channel.dispose();
  }
}
