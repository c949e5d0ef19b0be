import * as vscode from 'vscode';
import { nodeErrorSpans } from '../../core/util';
import type { InvalidWorkflowError } from '../../core';
import { Disposable } from '../platform/disposable';
import type { Display } from '../platform/display';

/**
 * Turns a 422 `invalid_workflow`'s `node_errors` into Problems entries on the workflow file: on the input's key
 * when the server named a field the node has, else on the node's key (a missing input), else at the start of the
 * file. Positions come from the JSON tree (core workflowPositions.ts, jsonc-parser), never from a regex.
 */
export class WorkflowProblems extends Disposable {
  private readonly collection = this.register(vscode.languages.createDiagnosticCollection('comfy-cloud'));

  constructor(private readonly display: Display) {
    super();
  }

  async show(uri: vscode.Uri, err: InvalidWorkflowError): Promise<void> {
    const doc = await vscode.workspace.openTextDocument(uri);
    const spans = nodeErrorSpans(doc.getText(), err.nodeErrors);
    const diagnostics = err.nodeErrors.map((n, i) => {
      const { offset, length } = spans[i];
      const range = new vscode.Range(doc.positionAt(offset), doc.positionAt(offset + length));
      // The reason, field and code are the server's words: made safe by the display.
      const d = new vscode.Diagnostic(
        range,
        this.display.text(`${n.field ? `${n.field}: ` : ''}${n.reason}`),
        vscode.DiagnosticSeverity.Error,
      );
      d.source = 'Comfy Cloud';
      d.code = this.display.text(err.code);
      return d;
    });
    this.collection.set(uri, diagnostics);
  }

  /** The refusal's diagnostics shown on the file at `uri` (none when there are none). */
  diagnostics(uri: vscode.Uri): readonly vscode.Diagnostic[] {
    return this.collection.get(uri) ?? [];
  }

  clear(uri: vscode.Uri): void {
    this.collection.delete(uri);
  }
}
