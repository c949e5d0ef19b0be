import * as vscode from 'vscode';
import { createHash } from 'node:crypto';
import { JobService, type JobChange, type StateStore } from '../core';
import type { Clients } from './clients';
import type { Config } from './config';
import { Disposable } from './disposable';
import type { Log } from './log';
import type { ApiKeys } from './secrets';

/**
 * The extension's side of the core {@link JobService} (one owner of the job state every view shares): built once in
 * `activate()`, it hands the service its clients (built by {@link Clients}, the only place that knows how), a
 * `vscode.EventEmitter` for `onDidChangeJob`, and the log; it tells the service when the base URL or a stored key
 * changes (the client is rebuilt); disposing it aborts every watch and request. Commands and views call `service`
 * and subscribe to `onDidChangeJob`; none builds a client of its own.
 */
export class JobServiceHost extends Disposable {
  readonly service: JobService;
  /** A job's new snapshot; a terminal status only once GET confirmed it. */
  readonly onDidChangeJob: vscode.Event<JobChange>;

  constructor(clients: Clients, config: Config, keys: ApiKeys, store: StateStore, log: Log) {
    super();
    const emitter = this.register(new vscode.EventEmitter<JobChange>());
    this.onDidChangeJob = emitter.event;
    this.service = new JobService({
      clients: {
        // The settings that make a client: the base URL, the API it speaks (v2, or the deprecated v1) and that
        // origin's key (hashed: compared, never kept).
        identity: async () => {
          const { surface, api } = config.connection();
          const key = await keys.get(surface.origin);
          return createHash('sha256').update(`${surface.baseUrl}\n${api}\n${key ?? ''}`).digest('hex');
        },
        create: () => clients.create(),
      },
      store,
      log,
      emitter,
      clientName: 'vscode',
    });
    this.register(this.service);
    const refresh = (): void => void this.service.refresh();
    this.register(config.onDidChange(refresh));
    this.register(keys.onDidChange(refresh));
  }

  /** Starts the background work (reconciling remembered submissions); never rejects, failures are logged. */
  start(): void {
    void this.service.start();
  }
}
