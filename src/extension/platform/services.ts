import * as vscode from 'vscode';
import { BatchStore, StateStore, defaultStateDir } from '../../core/state';
import { Redactor } from '../../core/util';
import type { RequestLogEntry } from '../../core/http';
import { Clients } from './clients';
import { Config } from './config';
import { Disposable } from './disposable';
import { Display } from './display';
import { JobServiceHost } from './jobServiceHost';
import { Log } from './log';
import { OutputLocations } from './outputs';
import { ApiKeys } from './secrets';

/**
 * The services every feature shares, built once in activation in dependency order: the redactor, the log and what is
 * shown (both redact the keys), the settings, the API keys, the state folder shared with the CLI (job, batch and asset
 * records), where outputs go, and the job service. Disposing it disposes the job service (every watch and request is
 * aborted) and the log.
 */
export class Services extends Disposable {
  /** One redactor for the log and everything shown: it learns each API key as it is read, set or changed. */
  readonly redactor = new Redactor();
  readonly log: Log;
  /** What is shown to a person passes through it (it redacts the keys). */
  readonly display: Display;
  readonly config = new Config();
  readonly keys: ApiKeys;
  /** The state store is shared with the CLI: a job submitted from either is visible to both. */
  readonly store = new StateStore(defaultStateDir(process.env));
  /** The batches' records, beside the job records (shared with the CLI). */
  readonly batchStore = new BatchStore(this.store.dir);
  readonly outputs: OutputLocations;
  private readonly requested = this.register(new vscode.EventEmitter<RequestLogEntry>());
  /** Fires with each request's outcome (the status bar's health where the surface has no probe). */
  readonly onDidRequest = this.requested.event;
  /** The one owner of clients and job watches: views and other extensions' code subscribe to `jobs.onDidChangeJob`. */
  readonly jobs: JobServiceHost;

  constructor(readonly context: vscode.ExtensionContext) {
    super();
    this.log = this.register(new Log(this.redactor));
    this.display = new Display(this.redactor);
    this.keys = new ApiKeys(context.secrets, this.redactor);
    this.register(this.keys.learnChanges());
    this.learnConfiguredKey();
    this.register(
      this.config.onDidChange(() => {
        this.log.info('config', 'settings changed');
        this.learnConfiguredKey();
      }),
    );
    this.outputs = new OutputLocations(this.config, context.globalStorageUri);
    const clients = new Clients(this.config, this.keys, this.log, (entry) => this.requested.fire(entry), this.store);
    this.jobs = this.register(new JobServiceHost(clients, this.config, this.keys, this.store, this.log));
  }

  /** Reads the configured origin's key, so the redactor knows it before any line could echo it. */
  private learnConfiguredKey(): void {
    let origin: string;
    try {
      origin = this.config.surface().origin;
    } catch {
      return; // a bad base URL: no request can be made, so no key can be echoed
    }
    this.keys.get(origin).then(undefined, () => undefined);
  }
}
