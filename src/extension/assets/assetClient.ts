/**
 * The asset client of a lease's connection, for the asset commands: present only where the connection's API has
 * assets (`capabilities.assets`), else a refusal in the user's words naming the API and how to move to one that has.
 */
import * as vscode from 'vscode';
import { InputError, refusalText, type ClientLease } from '../../core';
import type { V2Client } from '../../core/backends';
import type { ExtensionConnection } from '../platform/clients';

/** The asset client of the lease's connection, or undefined when its API has no assets (`capabilities.assets`). */
export function assetClient(lease: ClientLease<ExtensionConnection>): V2Client | undefined {
  return lease.backend.capabilities.assets ? lease.connection.assets : undefined;
}

/** Why the connection has no assets, in the user's words: the API it speaks, and how to move to one that has them. */
export function noAssets(lease: ClientLease<ExtensionConnection>): { code: string; message: string } {
  const api = lease.backend.api;
  return {
    code: 'no_assets',
    message: `${refusalText('assets', api, vscode.l10n.t)}. ${vscode.l10n.t('To use assets, remove "api": "{0}" from it in comfyCloud.connections.', api)}`,
  };
}

/** The asset client of the lease's connection. @throws InputError `no_assets` (nothing sent) when its API has none. */
export function requireAssets(lease: ClientLease<ExtensionConnection>): V2Client {
  const client = assetClient(lease);
  if (client) return client;
  const { code, message } = noAssets(lease);
  throw new InputError(code, message);
}
