import * as vscode from 'vscode';
import { ROUTER_SCHEMA_SCHEME } from '../platform/constants';

/** The URI of a model's input schema: `comfy-router-schema:/<provider>/<model>[/<variant>].json`. */
export function schemaUriOf(id: string): vscode.Uri {
  return vscode.Uri.from({ scheme: ROUTER_SCHEMA_SCHEME, path: `/${id}.json` });
}

/** The model id a schema URI names (`/p/m.json` → `p/m`); the router core validates its segments. */
export function modelIdOf(uri: vscode.Uri): string {
  return uri.path.replace(/^\//, '').replace(/\.json$/, '');
}
