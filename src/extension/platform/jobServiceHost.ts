import * as vscode from 'vscode';
import { createHash } from 'node:crypto';
import { JobService, type JobState } from '../../core';
import type { StateStore } from '../../core/state';
import type { Clients, ExtensionConnection } from './clients';
import type { Config } from './config';
import { Disposable } from './disposable';
import type { Log } from './log';
import type { ApiKeys } from './secrets';

/**
 * The extension's side of the core {@link JobService}: built once in `activate()`, it hands the service its
 * connections (built by {@link Clients}, the only place that knows how), `vscode.EventEmitter`s for its events, and the
 * log; it tells the service when the connection's settings or a stored key change (the connection is rebuilt);
 * disposing it aborts every watch and request. Commands and views call `service` and subscribe to its events; none
 * builds a client of its own.
 */
export class JobServiceHost extends Disposable {
  readonly service: JobService<ExtensionConnection>;
  /** A job's state whenever its job changed; a terminal status only once the server confirmed it. */
  readonly onDidChangeJob: vscode.Event<JobState>;
  /** A job's state whenever any of it changed (a preview frame, an outage too). */
  readonly onDidChangeJobState: vscode.Event<JobState>;

  constructor(
    clients: Clients,
    config: Config,
    keys: ApiKeys,
    /** The store of remembered submissions (shared with the CLI). */
    readonly store: StateStore,
    log: Log,
  ) {
    super();
    const job = this.register(new vscode.EventEmitter<JobState>());
    const state = this.register(new vscode.EventEmitter<JobState>());
    this.onDidChangeJob = job.event;
    this.onDidChangeJobState = state.event;
    this.service = new JobService({
      clients: {
        // The settings that make a connection: the base URL, the API it speaks and that origin's key (hashed:
        // compared, never kept).
        identity: async () => {
          const { surface, api } = config.connection();
          const key = await keys.get(surface.origin);
          return createHash('sha256')
            .update(`${surface.baseUrl}\n${api}\n${key ?? ''}`)
            .digest('hex');
        },
        create: () => clients.create(),
      },
      store,
      log,
      emitters: { job, state },
      clientName: 'vscode',
      // The job-end owner (jobEnds.ts) writes a job's final status after its outputs are on disk.
      recordsEnd: false,
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
