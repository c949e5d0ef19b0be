/**
 * The webview's handle on its host (`acquireVsCodeApi`, which may be called once per page): posting messages to the
 * extension and keeping the state saved across a reload. Every module of the monitor page posts through it.
 */
import type { WebviewMessage } from '../../src/core/views/monitor/protocol';

/** What the host gives the page. */
interface VsCodeApi {
  postMessage(message: WebviewMessage): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

/** The page's one handle on its host. */
export const vscode = acquireVsCodeApi();
