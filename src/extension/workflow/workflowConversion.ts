import * as path from 'node:path';
import { promises as fs } from 'node:fs';
import * as vscode from 'vscode';
import { parseTree, findNodeAtLocation } from 'jsonc-parser';
import { InputError } from '../../core';
import { canonicalJson, detectWorkflowFormat, hashBytes, type ApiWorkflow } from '../../core/util';
import { errorMessage } from '../../core/views';
import { ConversionError, convertUiWorkflow, type ConversionProblem } from '../../core/convert';
import type { NodeDefinitions } from '../../core/workflowSchema';
import { Commands } from '../platform/constants';
import { Disposable } from '../platform/disposable';
import type { Display } from '../platform/display';
import type { CommandHandlers } from '../platform/lazy';
import type { Log } from '../platform/log';
import { parseJsonText } from './workflowChecks';

/** The node definitions a conversion uses, and where they came from (workflow IntelliSense's). */
export interface ConversionDefinitions {
  readonly definitions: NodeDefinitions;
  readonly source: { readonly label: string };
}

/** What the conversion needs of workflow IntelliSense: its node definitions, and fetching them when none are cached. */
export interface DefinitionsProvider {
  /** The definitions in use (memory, else the cache); undefined when unknown. */
  definitions(): Promise<ConversionDefinitions | undefined>;
  /** Fetches them ("Refresh Node Definitions"); `quiet`: no message of its own on failure. */
  refresh(quiet?: boolean): Promise<{ readonly error?: string }>;
  /** True when the definitions in use are the local emulator's (the active connection, no engine set): its demo nodes only. */
  fromEmulator?(): boolean;
}

/** What "Convert to API Format" returns to its caller (tests, other extensions). */
export interface ConvertResult {
  /** `converted`: the API graph was opened beside the file; `refused`: nothing was opened (the message says why). */
  readonly status: 'converted' | 'refused';
  /** The untitled document holding the API graph. */
  readonly document?: vscode.TextDocument;
  readonly error?: {
    readonly code: string;
    readonly message: string;
    readonly problems?: readonly ConversionProblem[];
  };
}

/** The outcome of {@link WorkflowConversion.convert}: the API graph, or why there is none (nothing shown yet). */
export type Conversion = { readonly workflow: ApiWorkflow; readonly source: string } | { readonly error: InputError };

/** A refusal lists at most this many problems in its notification; every problem goes to the log ("Show All"). */
export const MAX_PROBLEMS_SHOWN = 3;

/** The CodeLens's and the quick fix's title. */
const convertTitle = (): string => vscode.l10n.t('Convert to API Format');

/**
 * UI-format workflows in the editor (the editor's save file: a top-level `nodes` array, core `detectWorkflowFormat`),
 * which the job service refuses (Job and Asset API v2, POST /api/v2/jobs, rule 2: `workflow_format_ui`):
 * - a CodeLens at the top of such a file and a quick fix on its `nodes` key (or on a `workflow_format_ui`
 *   diagnostic), "Convert to API Format": core `convertUiWorkflow` with workflow IntelliSense's node definitions
 *   (fetched once when none are cached), the result opened beside the file as an untitled `<name>.api.json` (the
 *   workflow schema applies to that name); a refusal lists each node that cannot be converted (id, title, class,
 *   reason, fix) and opens nothing;
 * - the API graph of a submission that was converted (or read from an image), kept as a file in the extension's
 *   storage ({@link storeApiWorkflow}): the job's record names it, so the job's workflow is the graph that was sent.
 */
export class WorkflowConversion extends Disposable {
  constructor(
    private readonly definitionsProvider: () => DefinitionsProvider,
    private readonly display: Display,
    private readonly log: Log,
    /** The extension's global storage: converted graphs go under `workflows/`. */
    private readonly storage: vscode.Uri,
  ) {
    super();
    const selector: vscode.DocumentSelector = [{ language: 'json' }, { language: 'jsonc' }];
    this.register(
      vscode.languages.registerCodeLensProvider(selector, { provideCodeLenses: (d) => this.provideCodeLenses(d) }),
    );
    this.register(
      vscode.languages.registerCodeActionsProvider(
        selector,
        { provideCodeActions: (d, r, c) => this.provideCodeActions(d, r, c) },
        { providedCodeActionKinds: [vscode.CodeActionKind.QuickFix] },
      ),
    );
  }

  /** The command this module handles (lazy.ts). */
  commands(): CommandHandlers {
    return { [Commands.convertToApiFormat]: (arg?: vscode.Uri) => this.convertToApiFormat(arg) };
  }

  /** "Convert to API Format" at the top of a UI-format workflow. */
  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    if (!isUiWorkflowText(document.getText())) return [];
    return [
      new vscode.CodeLens(new vscode.Range(0, 0, 0, 0), {
        title: convertTitle(),
        command: Commands.convertToApiFormat,
        arguments: [document.uri],
      }),
    ];
  }

  /** The quick fix "Convert to API Format", on the `nodes` key of a UI-format workflow or on its UI-format diagnostic. */
  provideCodeActions(
    document: vscode.TextDocument,
    range: vscode.Range,
    context: vscode.CodeActionContext,
  ): vscode.CodeAction[] {
    const text = document.getText();
    const diagnostics = context.diagnostics.filter(
      (d) => (typeof d.code === 'object' ? d.code.value : d.code) === 'workflow_format_ui',
    );
    const key = nodesKeySpan(text);
    const onKey =
      key !== undefined &&
      range.intersection(
        new vscode.Range(document.positionAt(key.offset), document.positionAt(key.offset + key.length)),
      ) !== undefined;
    if ((diagnostics.length === 0 && !onKey) || !isUiWorkflowText(text)) return [];
    const action = new vscode.CodeAction(convertTitle(), vscode.CodeActionKind.QuickFix);
    action.command = { title: convertTitle(), command: Commands.convertToApiFormat, arguments: [document.uri] };
    action.diagnostics = diagnostics;
    action.isPreferred = true;
    return [action];
  }

  /**
   * Converts a parsed UI-format workflow with workflow IntelliSense's node definitions (fetched once, quietly, when
   * none are known). Shows nothing.
   * @returns the API graph and the definitions' source, or the refusal: a {@link ConversionError} (its problems),
   *   InputError `no_node_definitions` (none could be had, with why).
   */
  async convert(workflow: unknown): Promise<Conversion> {
    const provider = this.definitionsProvider();
    let loaded = await provider.definitions();
    let why: string | undefined;
    if (!loaded) {
      why = (await provider.refresh(true)).error;
      loaded = await provider.definitions();
    }
    if (!loaded) {
      return {
        error: new InputError(
          'no_node_definitions',
          vscode.l10n.t(
            'the node definitions are unknown ({0}), and converting needs them: run "{1}"',
            why ?? vscode.l10n.t('none fetched'),
            vscode.l10n.t('Comfy Cloud: Refresh Node Definitions'),
          ),
        ),
      };
    }
    try {
      return { workflow: convertUiWorkflow(workflow, loaded.definitions), source: loaded.source.label };
    } catch (err) {
      if (!InputError.is(err)) throw err;
      return { error: (provider.fromEmulator?.() && emulatorRefusal(err, loaded.definitions)) || err };
    }
  }

  /**
   * Tells why `name` could not be converted: one error notification naming the first {@link MAX_PROBLEMS_SHOWN}
   * problems (node id, title, class, reason, fix), the count of the rest and "Show All" (the log holds every one).
   */
  showRefusal(name: string, err: InputError): void {
    const problems = err instanceof ConversionError ? err.problems : [];
    this.log.warn('convert', `${name} not converted to API format: ${err.code}: ${err.message.split('\n')[0]}`);
    for (const p of problems) this.log.warn('convert', `  ${problemLine(p)}`);
    if (problems.length === 0) {
      void this.display.error(
        vscode.l10n.t('Comfy Cloud: cannot convert {0} to API format: {1}', name, errorMessage(err, vscode.l10n.t)),
      );
      return;
    }
    const shown = problems.slice(0, MAX_PROBLEMS_SHOWN).map(problemLine).join(' ');
    const more =
      problems.length > MAX_PROBLEMS_SHOWN
        ? ' ' + vscode.l10n.t('(+{0} more: Show All)', problems.length - MAX_PROBLEMS_SHOWN)
        : '';
    const message =
      problems.length === 1
        ? vscode.l10n.t(
            'Comfy Cloud: cannot convert {0} to API format: 1 node cannot be converted exactly. {1}',
            name,
            shown,
          )
        : vscode.l10n.t(
            'Comfy Cloud: cannot convert {0} to API format: {1} nodes cannot be converted exactly. {2}{3}',
            name,
            problems.length,
            shown,
            more,
          );
    const showAll = vscode.l10n.t('Show All');
    void this.display.error(message, ...(problems.length > MAX_PROBLEMS_SHOWN ? [showAll] : [])).then((choice) => {
      if (choice === showAll) this.log.show();
    });
  }

  /**
   * "Convert to API Format": the UI-format workflow of `arg` (its open editor's text, unsaved edits included) or of
   * the active editor, converted and opened beside it as the untitled `<name>.api.json` (JSON; workflow IntelliSense
   * and the workflow schema apply to that name). A second conversion of the same file replaces that document's text.
   * When it cannot be converted, the message says why and nothing is opened.
   */
  async convertToApiFormat(arg?: vscode.Uri): Promise<ConvertResult> {
    const uri = arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
    const refused = (err: InputError, name: string): ConvertResult => {
      this.showRefusal(name, err);
      return {
        status: 'refused',
        error: {
          code: this.display.text(err.code),
          message: this.display.text(err.message),
          problems: err instanceof ConversionError ? err.problems : undefined,
        },
      };
    };
    if (!uri)
      return refused(
        new InputError('no_workflow', vscode.l10n.t("open a UI-format workflow (the editor's save file) first")),
        vscode.l10n.t('the workflow'),
      );
    const name = path.basename(uri.path) || 'workflow.json';
    let text: string;
    try {
      const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
      text = open
        ? open.getText()
        : new TextDecoder('utf-8', { fatal: true }).decode(await vscode.workspace.fs.readFile(uri));
    } catch (err) {
      return refused(
        new InputError(
          'unreadable',
          vscode.l10n.t('cannot read {0}: {1}', name, err instanceof Error ? err.message : String(err)),
        ),
        name,
      );
    }
    const value = parseJsonText(text);
    if (detectWorkflowFormat(value) !== 'ui') {
      return refused(
        new InputError(
          'not_ui_format',
          vscode.l10n.t('{0} is not a UI-format workflow (a top-level "nodes" array)', name),
        ),
        name,
      );
    }
    const converted = await this.convert(value);
    if ('error' in converted) return refused(converted.error, name);
    this.log.info(
      'convert',
      `${name} converted to API format (${Object.keys(converted.workflow).length} nodes) with the node definitions of ${converted.source}`,
    );
    const document = await this.openBeside(uri, apiNameOf(name), `${JSON.stringify(converted.workflow, null, 2)}\n`);
    return { status: 'converted', document };
  }

  /**
   * Opens `text` as the untitled document `name` beside the active editor (in the folder of `near` when it is a file,
   * else the first workspace folder), replacing the text of an untitled document of that name already open.
   */
  async openBeside(
    near: vscode.Uri | undefined,
    name: string,
    text: string,
    column = vscode.ViewColumn.Beside,
  ): Promise<vscode.TextDocument> {
    const folder =
      near?.scheme === 'file'
        ? path.dirname(near.fsPath)
        : (vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file')?.uri.fsPath ?? process.cwd());
    const target = vscode.Uri.file(path.join(folder, name)).with({ scheme: 'untitled' });
    let document = await vscode.workspace.openTextDocument(target);
    const edit = new vscode.WorkspaceEdit();
    edit.replace(
      target,
      new vscode.Range(document.positionAt(0), document.positionAt(document.getText().length)),
      text,
    );
    await vscode.workspace.applyEdit(edit);
    if (document.languageId !== 'json') document = await vscode.languages.setTextDocumentLanguage(document, 'json');
    await vscode.window.showTextDocument(document, { viewColumn: column, preview: false });
    return document;
  }

  /**
   * Converts the UI-format workflow `uiWorkflow` of the file `name` for a submission (Convert and Submit, Run with
   * Variations) and keeps its API graph ({@link storeApiWorkflow}, as `<name>.api.json`): the job's workflow is then
   * the graph sent. A conversion refused is shown ({@link showRefusal}) and returned as `{error}`.
   * @returns the graph, the file it is kept in and where its node definitions came from. @throws as the file system.
   */
  async convertAndStore(
    uiWorkflow: unknown,
    name: string,
  ): Promise<{ workflow: ApiWorkflow; file: string; source: string } | { error: InputError }> {
    const converted = await this.convert(uiWorkflow);
    if ('error' in converted) {
      this.showRefusal(name, converted.error);
      return converted;
    }
    const file = await this.storeApiWorkflow(apiNameOf(name), converted.workflow);
    return { workflow: converted.workflow, file, source: converted.source };
  }

  /**
   * Keeps the API graph of a submission that did not come from an API-format file (a converted UI workflow, an
   * image's `prompt`) as `<storage>/workflows/<hash>/<name>`, so the job's record names a file that holds exactly
   * what was sent (its Jobs view child, the monitor's Open Workflow and Go to node, Re-run read it; the record's
   * workflow hash matches it). Written to a temporary file renamed into place: never a partial file under the name.
   * @returns the file's absolute path. @throws as the file system.
   */
  async storeApiWorkflow(name: string, workflow: ApiWorkflow): Promise<string> {
    const hash = (await hashBytes(canonicalJson(workflow))).replace(/^[a-z0-9]+:/, '').slice(0, 16);
    const dir = path.join(this.storage.fsPath, 'workflows', hash);
    const file = path.join(dir, name);
    await fs.mkdir(dir, { recursive: true });
    const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
    await fs.writeFile(temp, `${JSON.stringify(workflow, null, 2)}\n`);
    await fs.rename(temp, file);
    return file;
  }
}

/** `flow.json` → `flow.api.json` (any other name: `.api.json` appended). */
export function apiNameOf(name: string): string {
  return `${name.replace(/\.json$/i, '')}.api.json`;
}

/** One problem in a line: `node 5 "Set width" (SetNode): reason. Fix.` */
function problemLine(p: ConversionProblem): string {
  const title = p.title ? ` “${p.title}”` : '';
  return vscode.l10n.t('node {0}{1} ({2}): {3} {4}', p.nodeId, title, p.classType, sentence(p.reason), sentence(p.fix));
}

function sentence(text: string): string {
  const t = text.trim();
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

/** True when `text` parses (tolerantly) to a UI-format workflow; a cheap look for `"nodes"` first. */
export function isUiWorkflowText(text: string): boolean {
  return text.includes('"nodes"') && detectWorkflowFormat(parseJsonText(text)) === 'ui';
}

/** Where the top-level `nodes` key is in `text` (jsonc-parser, never a regex). */
function nodesKeySpan(text: string): { offset: number; length: number } | undefined {
  const root = parseTree(text, [], { allowTrailingComma: true, disallowComments: false });
  const value = root && findNodeAtLocation(root, ['nodes']);
  const key = value?.parent?.type === 'property' ? value.parent.children?.[0] : undefined;
  return key ? { offset: key.offset, length: key.length } : undefined;
}

/**
 * On the local emulator's definitions, a refusal whose every problem is a class they lack says the real cause in one
 * sentence (the emulator defines only its demo nodes; core nodes such as KSampler are not "custom nodes to install"),
 * with the ways out: a server that has the nodes, or definitions given another way. Undefined when another problem is
 * among them (the refusal names each node then).
 */
function emulatorRefusal(err: InputError, definitions: ConversionDefinitions['definitions']): InputError | undefined {
  const problems = err instanceof ConversionError ? err.problems : [];
  if (problems.length === 0 || problems.some((p) => definitions.classes.has(p.classType))) return undefined;
  const missing = [...new Set(problems.map((p) => p.classType))].join(', ');
  return new InputError(
    err.code,
    vscode.l10n.t(
      'the local emulator defines only its demo nodes ({0}), not {1}. Connect to a server that has these nodes, or give node definitions with the setting {2} (the CLI: {3}).',
      [...definitions.classes.keys()].join(', '),
      missing,
      'comfyCloud.nodeDefinitionsUrl',
      'comfy-cloud convert --object-info FILE',
    ),
  );
}
