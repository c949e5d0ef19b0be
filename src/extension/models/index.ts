import * as path from 'node:path';
import * as vscode from 'vscode';
import { FetchEngine, globalFetch } from '../../core/http';
import { learnSecrets } from '../../core/util';
import { RouterClient, RouterService, fileKeyStore } from '../../core/router';
import {
  Commands,
  ContextKeys,
  ROUTER_SCHEMA_SCHEME,
  ROUTER_SECRET_PREFIX,
  Settings,
  Views,
} from '../platform/constants';
import { Disposable } from '../platform/disposable';
import { once, registerLazyCommands } from '../platform/lazy';
import type { Services } from '../platform/services';
import { ModelInputs } from './modelInputs';
import { ModelsView } from './modelsView';
import { RunModel } from './runModel';

export type { ModelsView } from './modelsView';

/**
 * The models feature over the model router: the router's one client (built at the first use of a router feature), the
 * Models view, model input documents with their schemas, and "Run Model".
 */
export class ModelsFeature extends Disposable {
  /** The model router's client owner, built at the first use of a router feature. */
  readonly router: () => RouterService;
  /** The Models view's provider, built at first use. */
  readonly modelsView: () => ModelsView;

  constructor(services: Services) {
    super();
    const { context, config, store, log, display } = services;
    // The model router's keys are redacted too: the configured router's at once, each as it is stored or changed.
    const routerKeys = learnSecrets(context.secrets, services.redactor, ROUTER_SECRET_PREFIX, () => {
      const origin = config.routerOrigin();
      return origin ? [origin] : [];
    });
    this.register({ dispose: routerKeys.dispose });
    // The model router's one client (core/router/routerService.ts): every router command and view leases it; a new
    // router URL or key retires it (closed once its last lease is released).
    let made: RouterService | undefined;
    const router = (this.router = once(
      () =>
        (made = this.register(
          new RouterService({
            // No URL, or no key stored for its origin: no router (the Models view shows its welcome).
            target: async () => {
              const origin = config.routerOrigin();
              const apiKey = origin ? await context.secrets.get(ROUTER_SECRET_PREFIX + origin) : undefined;
              return origin && apiKey ? { baseUrl: config.routerUrl(), apiKey } : undefined;
            },
            create: (target) =>
              new RouterClient({
                ...target,
                // The extension host's fetch: the user's proxy, PAC and certificates.
                engine: new FetchEngine(globalFetch),
                log: (entry) => log.request(entry),
                schemaCacheDir: path.join(store.dir, 'router-schemas'),
                keyStore: fileKeyStore(path.join(store.dir, 'router-keys')),
              }),
            onCloseError: (err) =>
              log.warn('models', `closing a router client failed: ${err instanceof Error ? err.message : String(err)}`),
          }),
        )),
    ));
    this.register(
      config.onDidChange(() => {
        void routerKeys.relearn();
        void made?.refresh();
      }, Settings.routerUrl),
    );
    this.register(context.secrets.onDidChange((e) => e.key.startsWith(ROUTER_SECRET_PREFIX) && void made?.refresh()));
    // The Models view: registered now, its provider loaded at its first display or command.
    const modelsChanged = this.register(new vscode.EventEmitter<void>());
    const tree: vscode.TreeView<unknown>[] = [];
    const models = (this.modelsView = once(() =>
      this.register(new ModelsView(modelsChanged, () => tree[0]!, router(), config, context.secrets, log)),
    ));
    tree.push(
      this.register(
        vscode.window.createTreeView(Views.models, {
          treeDataProvider: {
            onDidChangeTreeData: modelsChanged.event,
            getChildren: (n?: unknown) => models().getChildren(n),
            getTreeItem: (n: unknown) => models().getTreeItem(n),
          },
        }),
      ),
    );
    this.register(
      registerLazyCommands([Commands.setRouterKey, Commands.refreshModels, Commands.filterModels], () =>
        models().commands(),
      ),
    );
    // Model input schemas (comfy-router-schema:): the provider is registered now (an input opened before activation
    // asks for its schema), its module loaded at the first schema or command.
    const schemasChanged = this.register(new vscode.EventEmitter<vscode.Uri>());
    const inputs = once(() => this.register(new ModelInputs(router(), schemasChanged, log)));
    this.register(
      vscode.workspace.registerTextDocumentContentProvider(ROUTER_SCHEMA_SCHEME, {
        onDidChange: schemasChanged.event,
        provideTextDocumentContent: (uri) => inputs().provideTextDocumentContent(uri),
      }),
    );
    this.register(registerLazyCommands([Commands.newModelInput, Commands.refreshSchema], () => inputs().commands()));
    // Run Model: palette, editor title button (context key), CodeLens on a model input's $schema.
    const runs = once(() => this.register(new RunModel(router(), log, display)));
    this.register(registerLazyCommands([Commands.runModel], () => runs().commands()));
    const isInput = (d?: vscode.TextDocument): boolean =>
      d?.languageId === 'json' && d.getText().includes(`"${ROUTER_SCHEMA_SCHEME}:`);
    const inputKey = (): unknown =>
      vscode.commands.executeCommand(
        'setContext',
        ContextKeys.modelInput,
        isInput(vscode.window.activeTextEditor?.document),
      );
    this.register(vscode.window.onDidChangeActiveTextEditor(inputKey));
    this.register(
      vscode.workspace.onDidChangeTextDocument(
        (e) => e.document === vscode.window.activeTextEditor?.document && inputKey(),
      ),
    );
    void inputKey();
    this.register(
      vscode.languages.registerCodeLensProvider(
        { language: 'json' },
        { provideCodeLenses: (d) => (isInput(d) ? runs().codeLenses(d) : []) },
      ),
    );
  }
}

/** Registers the models feature: the router client, the Models view, model inputs and Run Model. */
export function register(services: Services): ModelsFeature {
  return new ModelsFeature(services);
}
