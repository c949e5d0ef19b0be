import * as path from 'node:path';
import * as vscode from 'vscode';
import { FetchEngine, globalFetch } from '../../core/http';
import { systemClock, type Clock } from '../../core';
import { userAgent } from '../../core/util';
import { parseObjectInfo, workflowJsonSchema, checkWorkflow, type NodeDefinitions } from '../../core/workflowSchema';
import { Commands, LanguageStatusItems } from '../platform/constants';
import type { Config } from '../platform/config';
import { Disposable } from '../platform/disposable';
import type { Display } from '../platform/display';
import type { CommandHandlers } from '../platform/lazy';
import type { Log } from '../platform/log';
import {
  NodeDefinitionsCache,
  httpObjectInfoFetch,
  nodeDefinitionSource,
  type NodeDefinitionSource,
  type ObjectInfoFetch,
} from '../../core/workflowSchema';
import type { WorkflowProblems } from './problems';
import type { ApiKeys } from '../platform/secrets';
import {
  WORKFLOW_SCHEMA_URI,
  diagnosticSpans,
  parseJsonText,
  problemsBeforeSubmit,
  schemaInsertion,
  usesWorkflowSchema,
} from './workflowChecks';

/** Node definitions in memory: their source, when they were fetched (ms since the epoch), and the parsed map. */
interface Loaded {
  readonly source: NodeDefinitionSource;
  readonly fetchedAt: number;
  readonly definitions: NodeDefinitions;
}

/** Knobs of {@link WorkflowIntelliSense} (tests). */
export interface WorkflowIntelliSenseOptions {
  /** The fetch of a source's `object_info` (default: over HTTP with the host's fetch, {@link httpObjectInfoFetch}). */
  readonly fetchFor?: (source: NodeDefinitionSource, apiKey: string | undefined) => ObjectInfoFetch;
  /** The wait after the last edit before a document's diagnostics are recomputed, ms (default 300). */
  readonly debounceMs?: number;
  readonly clock?: Clock;
}

/** What workflow IntelliSense uses of the extension: the settings it reads, the API keys, the log and the display. */
export interface WorkflowIntelliSenseHost {
  /** The active connection and `comfyCloud.nodeDefinitionsUrl` (the source of the node definitions), and their changes. */
  readonly config: Pick<Config, 'connection' | 'nodeDefinitionsUrl' | 'onDidChange'>;
  /** The active connection's key, sent when its `object_info` is fetched. */
  readonly keys: Pick<ApiKeys, 'get'>;
  readonly log: Log;
  readonly display: Display;
}

/**
 * What "Refresh Node Definitions" returns to its caller (tests, other extensions): the classes read, their source and
 * cache file, or the error; and the language status's text after it. Open workflows are re-checked before it returns.
 */
export interface RefreshResult {
  readonly classes?: number;
  readonly source?: string;
  /** The cache file written (absolute path). */
  readonly file?: string;
  readonly error?: string;
  readonly status: string;
  /** The language status's detail after it: why there are no definitions, when there are none. */
  readonly statusDetail?: string;
  /** The title of the language status's command after it. */
  readonly statusCommand?: string;
  /** True when the language status shows as a warning (the definitions could not be fetched). */
  readonly statusWarning?: boolean;
}

/**
 * Workflow IntelliSense in the editor, built at first use (a workflow file, the schema's scheme, the command, a code
 * action request on a JSON file naming `class_type`, a submission):
 * - node definitions from `comfyCloud.nodeDefinitionsUrl` (a local engine) else the active connection, cached on
 *   disk per source (nodeDefinitions.ts), read from the cache at first use, fetched by "Refresh Node Definitions"
 *   and once on their own when there is no cache and a workflow file is opened;
 * - the `comfy-workflow-schema://schemas/api-format.json` document: core `workflowJsonSchema` of the definitions (without
 *   them: the same generator with no classes, which takes any `class_type` and checks no inputs, so the JSON service
 *   stays quiet);
 * - the code action inserting `$schema` in an API-format JSON file without one;
 * - diagnostics beyond the schema (core `checkWorkflow`, `scope: 'beyondSchema'`) on workflows that use the schema,
 *   none while the definitions are unknown, and a language status item saying which definitions are in use or why
 *   there are none;
 * - the check before submit ({@link checkBeforeSubmit}).
 */
export class WorkflowIntelliSense extends Disposable {
  private readonly cache: NodeDefinitionsCache;
  private readonly collection = this.register(vscode.languages.createDiagnosticCollection('comfy-cloud-workflow'));
  private readonly status = this.register(
    vscode.languages.createLanguageStatusItem(LanguageStatusItems.nodeDefinitions, { language: 'json' }),
  );
  private readonly options: WorkflowIntelliSenseOptions &
    WorkflowIntelliSenseHost & { problems: WorkflowProblems; schemaChanged: vscode.EventEmitter<vscode.Uri> };
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly clock: Clock;
  /** The definitions of the source in effect, once loaded (from the cache or a fetch). */
  private loaded: Loaded | undefined;
  /** The source whose cache was read (a miss included), so it is read once. */
  private readFrom: string | undefined;
  /** Sources fetched on their own (no cache, a workflow opened): at most once each per session. */
  private readonly autoFetched = new Set<string>();
  private refreshing: Promise<RefreshResult> | undefined;
  /** Why there are no definitions, for the status item (the last failure). */
  private failure: string | undefined;

  /**
   * @param host the extension's settings, keys, log and display.
   * @param context its global storage holds the cache (folder `node-definitions`).
   * @param schemaChanged fired with the schema's URI after a refresh: open workflow files revalidate against it.
   */
  constructor(
    host: WorkflowIntelliSenseHost,
    problems: WorkflowProblems,
    context: { readonly globalStorageUri: vscode.Uri },
    schemaChanged: vscode.EventEmitter<vscode.Uri>,
    knobs: WorkflowIntelliSenseOptions = {},
  ) {
    super();
    this.options = {
      config: host.config,
      keys: host.keys,
      log: host.log,
      display: host.display,
      problems,
      schemaChanged,
      ...knobs,
    };
    this.cache = new NodeDefinitionsCache(path.join(context.globalStorageUri.fsPath, 'node-definitions'));
    this.clock = knobs.clock ?? systemClock;
    this.status.name = vscode.l10n.t('Comfy Cloud Node Definitions');
    // "Add the workflow schema ($schema)" in JSON files that look like API format (checked per request).
    this.register(
      vscode.languages.registerCodeActionsProvider(
        { language: 'json' },
        { provideCodeActions: (d) => this.provideCodeActions(d) },
        { providedCodeActionKinds: [vscode.CodeActionKind.QuickFix] },
      ),
    );
    this.register(vscode.workspace.onDidOpenTextDocument((d) => this.track(d)));
    this.register(vscode.workspace.onDidChangeTextDocument((e) => this.schedule(e.document)));
    this.register(vscode.workspace.onDidCloseTextDocument((d) => this.forget(d.uri)));
    this.register(host.config.onDidChange(() => void this.sourceChanged()));
    this.register({
      dispose: () => {
        for (const timer of this.timers.values()) clearTimeout(timer);
        this.timers.clear();
      },
    });
    this.showStatus();
    for (const d of vscode.workspace.textDocuments) this.track(d);
  }

  /** The source in effect (the setting's engine, else the active connection), or the reason there is none. */
  private source(): NodeDefinitionSource | { error: string } {
    try {
      const connection = this.options.config.connection();
      return nodeDefinitionSource(this.options.config.nodeDefinitionsUrl(), {
        name: connection.name,
        baseUrl: connection.surface.baseUrl,
      });
    } catch (err) {
      return { error: err instanceof Error ? err.message : String(err) };
    }
  }

  /** True when the source in effect is the active connection and it is the local emulator (its demo nodes only). */
  fromEmulator(): boolean {
    const source = this.source();
    if ('error' in source || source.kind !== 'connection') return false;
    try {
      return this.options.config.connection().kind === 'emulator';
    } catch {
      return false;
    }
  }

  /** The definitions of the source in effect: in memory, else from its cache (read once); undefined when unknown. */
  async definitions(): Promise<Loaded | undefined> {
    const source = this.source();
    if ('error' in source) return undefined;
    const key = keyOf(source);
    if (this.loaded && keyOf(this.loaded.source) === key) return this.loaded;
    if (this.readFrom === key) return undefined;
    this.readFrom = key;
    const cached = await this.cache.load(source);
    if (!cached) return undefined;
    const loaded: Loaded = { source, fetchedAt: cached.fetchedAt, definitions: parseObjectInfo(cached.objectInfo) };
    // The source may have changed while the file was read.
    if (keyOf(source) === keyOfSource(this.source())) this.loaded = loaded;
    this.showStatus();
    return loaded;
  }

  /**
   * "Refresh Node Definitions": fetches the source's `object_info`, caches it, and revalidates every open workflow.
   * A failure is shown (unless `quiet`) and logged; the definitions in use stay as they were.
   */
  refresh(quiet = false): Promise<RefreshResult> {
    this.refreshing ??= this.fetch(quiet).finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async fetch(quiet: boolean): Promise<RefreshResult> {
    const source = this.source();
    if ('error' in source) return await this.failed(source.error, quiet);
    try {
      const apiKey = source.kind === 'connection' ? await this.options.keys.get(new URL(source.url).origin) : undefined;
      const fetchOf =
        this.options.fetchFor ??
        ((s, key) =>
          httpObjectInfoFetch({
            source: s,
            apiKey: key,
            engine: new FetchEngine(globalFetch),
            userAgent: userAgent('vscode'),
            log: (e) => this.options.log.request(e),
          }));
      const raw = await fetchOf(source, apiKey)(AbortSignal.timeout(120_000));
      const definitions = parseObjectInfo(raw);
      if (definitions.classes.size === 0)
        return await this.failed(vscode.l10n.t('{0} serves no node definitions', source.label), quiet);
      const entry = await this.cache.save(source, raw, this.clock.now());
      this.loaded = { source, fetchedAt: entry.fetchedAt, definitions };
      this.readFrom = keyOf(source);
      this.failure = undefined;
      this.options.log.info(
        'workflow',
        `${definitions.classes.size} node classes from ${source.url}${definitions.skipped ? ` (${definitions.skipped} skipped)` : ''}`,
      );
      await this.changed();
      return {
        classes: definitions.classes.size,
        source: source.label,
        file: this.cache.fileOf(source),
        ...this.statusResult(),
      };
    } catch (err) {
      return await this.failed(err instanceof Error ? err.message : String(err), quiet);
    }
  }

  private async failed(reason: string, quiet: boolean): Promise<RefreshResult> {
    this.failure = reason;
    this.options.log.warn('workflow', `node definitions not fetched: ${reason}`);
    if (!quiet)
      void this.options.display.error(
        vscode.l10n.t('Comfy Cloud: the node definitions could not be fetched: {0}', reason),
      );
    // The definitions in use may be none (another source): open workflows are re-checked with what there is.
    await this.recheckAll();
    return { error: this.options.display.text(reason), ...this.statusResult() };
  }

  private statusResult(): Pick<RefreshResult, 'status' | 'statusDetail' | 'statusCommand' | 'statusWarning'> {
    return {
      status: this.status.text,
      statusDetail: this.status.detail,
      statusCommand: this.status.command?.title,
      statusWarning: this.status.severity === vscode.LanguageStatusSeverity.Warning,
    };
  }

  /** The schema, editors and status follow new definitions (a refresh, another source). */
  private async changed(): Promise<void> {
    this.options.schemaChanged.fire(vscode.Uri.parse(WORKFLOW_SCHEMA_URI));
    await this.recheckAll();
  }

  /** The status and the diagnostics of every open document, now (never fetching: a refresh calls it). */
  private async recheckAll(): Promise<void> {
    this.showStatus();
    await Promise.all(
      vscode.workspace.textDocuments.filter(isJson).map((d) => {
        clearTimeout(this.timers.get(d.uri.toString()));
        return this.diagnose(d, false).catch((err: unknown) =>
          this.options.log.warn('workflow', `cannot check ${d.uri.toString(true)}: ${String(err)}`),
        );
      }),
    );
  }

  private async sourceChanged(): Promise<void> {
    if (this.loaded && keyOf(this.loaded.source) === keyOfSource(this.source())) return;
    this.loaded = undefined;
    this.readFrom = undefined;
    this.failure = undefined;
    await this.definitions();
    await this.changed();
  }

  /**
   * The text of `comfy-workflow-schema://schemas/api-format.json` (the provider of the scheme serves it for any path: there is
   * one schema): the schema of the definitions in use, or of none.
   */
  async schemaText(): Promise<string> {
    const loaded = await this.definitions();
    const definitions: NodeDefinitions = loaded?.definitions ?? { classes: new Map(), skipped: 0 };
    return JSON.stringify(
      workflowJsonSchema(definitions, vscode.l10n.t, { id: WORKFLOW_SCHEMA_URI, sourceName: loaded?.source.label }),
    );
  }

  /** "Add the workflow schema ($schema)" for an API-format JSON document without `$schema`. */
  provideCodeActions(document: vscode.TextDocument): vscode.CodeAction[] {
    const insertion = schemaInsertion(document.getText());
    if (!insertion) return [];
    const action = new vscode.CodeAction(
      vscode.l10n.t('Add the workflow schema ($schema)'),
      vscode.CodeActionKind.QuickFix,
    );
    action.edit = new vscode.WorkspaceEdit();
    action.edit.insert(document.uri, document.positionAt(insertion.offset), insertion.text);
    return [action];
  }

  /** A document opened (or already open): diagnosed now; the definitions fetched once when none are cached. */
  private track(document: vscode.TextDocument): void {
    if (!isJson(document)) return;
    this.schedule(document, 0);
  }

  /** Recomputes `document`'s diagnostics after `delay` ms without a further change (the debounce). */
  private schedule(document: vscode.TextDocument, delay = this.options.debounceMs ?? 300): void {
    if (!isJson(document)) return;
    const key = document.uri.toString();
    clearTimeout(this.timers.get(key));
    this.timers.set(
      key,
      setTimeout(() => {
        this.timers.delete(key);
        this.diagnose(document).catch((err: unknown) =>
          this.options.log.warn('workflow', `cannot check ${document.uri.toString(true)}: ${String(err)}`),
        );
      }, delay),
    );
  }

  private forget(uri: vscode.Uri): void {
    clearTimeout(this.timers.get(uri.toString()));
    this.timers.delete(uri.toString());
    this.collection.delete(uri);
  }

  /**
   * The diagnostics beyond the schema of one document (none unless it uses the schema and definitions are known).
   * @param autoFetch fetch the definitions once when none are cached (not from within a refresh).
   */
  async diagnose(document: vscode.TextDocument, autoFetch = true): Promise<readonly vscode.Diagnostic[]> {
    if (document.isClosed) return [];
    const text = document.getText();
    const value = parseJsonText(text);
    if (!usesWorkflowSchema(document.uri.path, value)) {
      this.collection.delete(document.uri);
      return [];
    }
    let loaded = await this.definitions();
    const source = this.source();
    if (autoFetch && !loaded && !('error' in source) && !this.autoFetched.has(keyOf(source))) {
      // No cache: fetched once, quietly (the status says why when it fails).
      this.autoFetched.add(keyOf(source));
      await this.refresh(true);
      loaded = await this.definitions();
    }
    if (document.isClosed || document.getText() !== text) return [];
    const check = checkWorkflow(value, loaded?.definitions, vscode.l10n.t, { scope: 'beyondSchema' });
    const spans = diagnosticSpans(text, check.diagnostics);
    const diagnostics = check.diagnostics.map((d, i) => {
      const range = new vscode.Range(
        document.positionAt(spans[i]!.offset),
        document.positionAt(spans[i]!.offset + spans[i]!.length),
      );
      // The messages quote the document's and the server's names: made safe by the display.
      const diagnostic = new vscode.Diagnostic(
        range,
        this.options.display.text(d.message),
        d.code === 'prompt_no_outputs' ? vscode.DiagnosticSeverity.Warning : vscode.DiagnosticSeverity.Error,
      );
      diagnostic.source = 'Comfy Cloud';
      diagnostic.code = d.code;
      return diagnostic;
    });
    this.collection.set(document.uri, diagnostics);
    return diagnostics;
  }

  /** The language status: the definitions in use, or why there are none (with the command to fetch them). */
  private showStatus(): void {
    const status = this.status;
    const loaded = this.loaded;
    status.command = { title: vscode.l10n.t('Refresh Node Definitions'), command: Commands.refreshNodeDefinitions };
    if (loaded) {
      status.severity = vscode.LanguageStatusSeverity.Information;
      status.text = vscode.l10n.t(
        '{0} node classes from {1}, fetched {2}',
        loaded.definitions.classes.size,
        this.options.display.text(loaded.source.label),
        new Date(loaded.fetchedAt).toLocaleString(),
      );
      status.detail = vscode.l10n.t('Workflow IntelliSense');
      return;
    }
    // Not loaded yet is no fault (they are fetched on demand): a warning only when fetching them failed.
    status.severity = this.failure ? vscode.LanguageStatusSeverity.Warning : vscode.LanguageStatusSeverity.Information;
    status.text = vscode.l10n.t('Node definitions: not loaded');
    status.command = { title: vscode.l10n.t('Load'), command: Commands.refreshNodeDefinitions };
    status.detail = this.failure
      ? this.options.display.text(this.failure)
      : vscode.l10n.t('Workflow diagnostics stay quiet until the node definitions are loaded.');
  }

  /**
   * The check before submit (the same validation runs before submit): with definitions of the ACTIVE
   * connection cached (never an engine's of `comfyCloud.nodeDefinitionsUrl`, which may differ from the server),
   * every rule of core `checkWorkflow`; problems go to Problems at their nodes (as a 422 `invalid_workflow` would)
   * and the refusal is returned in the server's words. Undefined: submit.
   */
  async checkBeforeSubmit(
    uri: vscode.Uri | undefined,
    workflow: unknown,
  ): Promise<{ code: string; message: string } | undefined> {
    let connection: NodeDefinitionSource;
    let emulator: boolean;
    try {
      const active = this.options.config.connection();
      connection = nodeDefinitionSource(undefined, { name: active.name, baseUrl: active.surface.baseUrl });
      emulator = active.kind === 'emulator';
    } catch {
      return undefined; // the submission itself reports a bad connection
    }
    let definitions: NodeDefinitions | undefined;
    if (this.loaded && keyOf(this.loaded.source) === keyOf(connection)) definitions = this.loaded.definitions;
    else {
      const cached = await this.cache.load(connection);
      definitions = cached ? parseObjectInfo(cached.objectInfo) : undefined;
    }
    const refused = problemsBeforeSubmit(workflow, definitions, vscode.l10n.t, { emulator });
    if (!refused) return undefined;
    if (uri)
      await this.options.problems
        .show(uri, refused.error)
        .catch((err: unknown) => this.options.log.warn('workflow', `cannot show the problems: ${String(err)}`));
    return { code: refused.error.code, message: refused.message };
  }

  /** The commands this module handles (lazy.ts). */
  commands(): CommandHandlers {
    return { [Commands.refreshNodeDefinitions]: () => this.refresh() };
  }
}

/**
 * Read-only copies of a file that other views open (a git diff's old side, a save conflict's "in file" side): not
 * checked, or Problems would list each problem once per copy.
 */
const COPY_SCHEMES = new Set(['git', 'conflictResolution', 'merge-conflict.conflict-diff', 'vscode-scm', 'review']);

function isJson(document: vscode.TextDocument): boolean {
  return (document.languageId === 'json' || document.languageId === 'jsonc') && !COPY_SCHEMES.has(document.uri.scheme);
}

function keyOf(source: NodeDefinitionSource): string {
  return `${source.kind} ${source.url}`;
}

function keyOfSource(source: NodeDefinitionSource | { error: string }): string | undefined {
  return 'error' in source ? undefined : keyOf(source);
}
