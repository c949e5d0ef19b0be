import * as vscode from 'vscode';
import type { ConnectionApi } from '../../core/connection';

/**
 * How the status bar and the connections quick pick name the API a connection speaks, when it is not the default v2
 * (which goes unsaid): a table, so that what shows it never names an API in a branch. Undefined: nothing said.
 */
const API_WORDS: Record<ConnectionApi, (() => string) | undefined> = {
  v2: undefined,
  v1: () => vscode.l10n.t('v1 API (deprecated)'),
  comfyui: () => vscode.l10n.t('ComfyUI server'),
};

/** The words naming `api` (e.g. "ComfyUI server"), or undefined for the default v2. */
export function apiWords(api: ConnectionApi): string | undefined {
  return API_WORDS[api]?.();
}
