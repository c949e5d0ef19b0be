import * as vscode from 'vscode';
import { neutralize } from '../../core/util';
import { prefillInput, requestBodySchema, type RouterService } from '../../core/router';
import { Commands, ROUTER_SCHEMA_SCHEME } from '../platform/constants';
import { Disposable } from '../platform/disposable';
import { modelIdOf, schemaUriOf } from './modelUris';
import type { CommandHandlers } from '../platform/lazy';
import type { Log } from '../platform/log';
import type { ModelNode } from './modelsView';

/**
 * New Model Input and the model input schemas: the `comfy-router-schema:` documents are each
 * model's request-body schema (src/core/router/inputSchema.ts), read through the router client's ETag cache under
 * the state dir (`<state dir>/router-schemas`); "Refresh Schema" fires the provider's change event for every open
 * schema document, so the JSON language service revalidates the inputs using it.
 */
export class ModelInputs extends Disposable {
  /**
   * @param router the model router's client, whose schema cache is under the state dir (leased per schema read).
   * @param changed the schema provider's change event (fired by "Refresh Schema").
   */
  constructor(
    private readonly router: Pick<RouterService, 'lease'>,
    private readonly changed: vscode.EventEmitter<vscode.Uri>,
    private readonly log: Log,
  ) {
    super();
  }

  /** The converted schema of the model `uri` names, as JSON text; a schema saying why when it cannot be had. */
  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const id = modelIdOf(uri);
    try {
      const lease = await this.router.lease();
      if (!lease)
        return JSON.stringify({
          description: vscode.l10n.t('No model router is connected: its schema cannot be loaded.'),
        });
      const result = await lease.client.getInputSchema(id).finally(() => lease.release());
      if (result.stale)
        this.log.warn('models', `the schema of ${id} is a stale copy: ${neutralize(result.staleReason ?? '')}`);
      return JSON.stringify(requestBodySchema(JSON.parse(result.bytes.toString('utf8'))), null, 2);
    } catch (e) {
      const message = neutralize(e instanceof Error ? e.message : String(e));
      this.log.warn('models', `the schema of ${id} could not be loaded: ${message}`);
      return JSON.stringify({ description: vscode.l10n.t('The schema of {0} could not be loaded: {1}', id, message) });
    }
  }

  /** Opens an untitled JSON input for model `id`: `$schema` and the required fields with their defaults. */
  async newModelInput(arg?: unknown): Promise<vscode.TextDocument | undefined> {
    const node = arg as ModelNode | undefined;
    let id = typeof arg === 'string' ? arg : node?.kind === 'model' ? node.entry.id : undefined;
    id ??= await vscode.window.showInputBox({
      title: vscode.l10n.t('New Model Input'),
      prompt: vscode.l10n.t('Model id (provider/model)'),
      ignoreFocusOut: true,
    });
    if (!id) return undefined;
    const uri = schemaUriOf(id.trim());
    const schema = JSON.parse(await this.provideTextDocumentContent(uri)) as Record<string, unknown>;
    const doc = await vscode.workspace.openTextDocument({
      language: 'json',
      content: prefillInput(schema, uri.toString()),
    });
    await vscode.window.showTextDocument(doc);
    return doc;
  }

  /** Re-reads every open schema document (ETag revalidation), so open inputs revalidate. */
  refreshSchemas(): number {
    const open = vscode.workspace.textDocuments.filter((d) => d.uri.scheme === ROUTER_SCHEMA_SCHEME);
    for (const d of open) this.changed.fire(d.uri);
    return open.length;
  }

  /** The commands this module handles (lazy.ts). */
  commands(): CommandHandlers {
    return {
      [Commands.newModelInput]: (arg?: unknown) => this.newModelInput(arg),
      [Commands.refreshSchema]: () => this.refreshSchemas(),
    };
  }
}
