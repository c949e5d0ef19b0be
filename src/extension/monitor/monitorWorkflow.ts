/**
 * What a monitor does with its job's workflow and files outside the page: reads the workflow into the graph it shows,
 * opens the workflow, selects a node in it, and saves an output elsewhere. Functions of what they are given: the
 * panel holds the job and the record.
 */
import * as vscode from 'vscode';
import * as path from 'node:path';
import { promises as fs } from 'node:fs';
import { AbortError } from '../../core';
import { nodeErrorSpans } from '../../core/util';
import { errorMessage } from '../../core/views';
import { workflowGraph, type GraphModel } from '../../core/graph/model';
import { loadJobWorkflow, type JobWorkflow } from '../../core/views/jobDocuments';
import type { MonitorGraph } from '../../core/views/monitor/protocol';
import type { NodeDefinitions } from '../../core/workflowSchema/objectInfo';
import { Commands } from '../platform/constants';
import type { Display } from '../platform/display';
import type { JobServiceHost } from '../platform/jobServiceHost';
import type { Log } from '../platform/log';

/** The job a graph is read for: as the Jobs view's documents take it (core jobDocuments.ts). */
type GraphEntry = Parameters<typeof loadJobWorkflow>[1];

/**
 * Reads the job's workflow and makes its graph: the remembered record's workflow file first (the file that was
 * submitted, unchanged since: its nodes can be shown in it), else the server's copy (Job and Asset API v2,
 * `GET /api/v2/jobs/{id}/workflow`), both through the Jobs view's one reader (core jobDocuments.ts `loadJobWorkflow`).
 * The sockets get their types from `deps.definitions` (workflow IntelliSense's node definitions), as in the workflow
 * graph; without them an API-format graph is drawn as its JSON shows it, marked `typesUnknown`.
 * @returns the graph (the model, or why there is none: cleaned by `display`) and every node id of it (inner ones
 *   included); undefined when the read was aborted (the service was disposed).
 */
export async function readJobGraph(
  deps: {
    jobs: JobServiceHost;
    display: Display;
    log: Log;
    definitions?(): Promise<NodeDefinitions | undefined>;
  },
  entry: GraphEntry,
): Promise<{ graph: MonitorGraph; nodeIds: string[] } | undefined> {
  let loaded: JobWorkflow | undefined;
  let why = '';
  if (entry.record?.workflowFile) loaded = await loadJobWorkflow(undefined, entry).catch(() => undefined);
  if (!loaded) {
    try {
      loaded = await deps.jobs.service.use((lease) => loadJobWorkflow(lease.backend, entry, { signal: lease.signal }));
    } catch (err) {
      if (AbortError.is(err)) return undefined;
      why = errorMessage(err, vscode.l10n.t);
      deps.log.info('monitor', `job ${entry.jobId}: no graph: ${why}`);
    }
  }
  // A definitions source that fails is one that has none: the graph is still drawn.
  const definitions = loaded ? await deps.definitions?.().catch(() => undefined) : undefined;
  const made = loaded ? workflowGraph(loaded.workflow, definitions) : undefined;
  const model: GraphModel | null = made && 'model' in made ? made.model : null;
  if (made && 'problem' in made) why = made.problem;
  const nodeIds = model
    ? [...model.root.nodes, ...Object.values(model.subgraphs).flatMap((g) => g.nodes)].map((n) => n.id)
    : [];
  const graph: MonitorGraph = {
    model,
    unavailable: model ? null : deps.display.text(why || vscode.l10n.t('the workflow cannot be read')),
    canReveal: model !== null && loaded?.source === 'file',
    typesUnknown: model?.format === 'api' && definitions === undefined,
  };
  return { graph, nodeIds };
}

/** Opens the remembered workflow `file` when it still exists, else the job's workflow document (Jobs view). */
export async function openJobWorkflowFile(file: string | undefined, jobId: string): Promise<unknown> {
  const exists =
    file !== undefined &&
    (await fs.stat(file).then(
      (s) => s.isFile(),
      () => false,
    ));
  if (file && exists) {
    await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: false });
    return file;
  }
  return vscode.commands.executeCommand(Commands.openJobWorkflow, jobId);
}

/**
 * Opens the workflow `file` and selects node `nodeId`'s key (positions from the JSON tree, core workflowPositions.ts
 * with jsonc-parser, as the Problems entries). Returns the selected range's text; undefined when the file has no such
 * node (it is opened all the same).
 */
export async function revealNode(file: string, nodeId: string): Promise<string | undefined> {
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
  const [span] = nodeErrorSpans(doc.getText(), [{ nodeId }]);
  if (!span) {
    await vscode.window.showTextDocument(doc, { preview: false, viewColumn: vscode.ViewColumn.One });
    return undefined;
  }
  const range = new vscode.Range(doc.positionAt(span.offset), doc.positionAt(span.offset + span.length));
  const editor = await vscode.window.showTextDocument(doc, {
    selection: range,
    preview: false,
    viewColumn: vscode.ViewColumn.One,
  });
  editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  return doc.getText(range);
}

/** Copies an output's saved `file` where the person chooses (a save dialog); returns the target, or undefined. */
export async function saveOutputAs(file: string, display: Display): Promise<string | undefined> {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const target = await vscode.window.showSaveDialog({
    title: vscode.l10n.t('Save Output As'),
    defaultUri: folder ? vscode.Uri.joinPath(folder, path.basename(file)) : undefined,
  });
  if (!target) return undefined;
  await vscode.workspace.fs.copy(vscode.Uri.file(file), target, { overwrite: true });
  void display.info(vscode.l10n.t('Comfy Cloud: output saved as {0}.', target.fsPath));
  return target.fsPath;
}
