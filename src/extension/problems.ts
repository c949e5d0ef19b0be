import * as vscode from 'vscode';
import type { InvalidWorkflowError } from '../core';
import type { Display } from './display';

/**
 * Turns a 422 `invalid_workflow`'s `node_errors` into Problems entries on the workflow file: each on the node's
 * key, or on the input's key inside that node when the server named the field.
 */
export class WorkflowProblems implements vscode.Disposable {
  private readonly collection = vscode.languages.createDiagnosticCollection('comfy-cloud');

  constructor(private readonly display: Display) {}

  async show(uri: vscode.Uri, err: InvalidWorkflowError): Promise<void> {
    const doc = await vscode.workspace.openTextDocument(uri);
    const text = doc.getText();
    const diagnostics = err.nodeErrors.map((n) => {
      const range = locate(doc, text, n.nodeId, n.field);
      // The reason, field and code are the server's words: made safe by the display.
      const d = new vscode.Diagnostic(range, this.display.text(`${n.field ? `${n.field}: ` : ''}${n.reason}`), vscode.DiagnosticSeverity.Error);
      d.source = 'Comfy Cloud';
      d.code = this.display.text(err.code);
      return d;
    });
    this.collection.set(uri, diagnostics);
  }

  clear(uri: vscode.Uri): void {
    this.collection.delete(uri);
  }

  dispose(): void {
    this.collection.dispose();
  }
}

/** The range of `"nodeId":` (and of `"field":` after it, when given) in the JSON text; the start when absent. */
function locate(doc: vscode.TextDocument, text: string, nodeId: string, field?: string): vscode.Range {
  const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const node = new RegExp(`"${escape(nodeId)}"\\s*:`).exec(text);
  if (!node) return new vscode.Range(0, 0, 0, 0);
  let start = node.index;
  let length = nodeId.length + 2;
  if (field) {
    const inner = new RegExp(`"${escape(field)}"\\s*:`, 'g');
    inner.lastIndex = node.index + node[0].length;
    const hit = inner.exec(text);
    if (hit) {
      start = hit.index;
      length = field.length + 2;
    }
  }
  return new vscode.Range(doc.positionAt(start), doc.positionAt(start + length));
}
