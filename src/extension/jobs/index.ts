import * as vscode from 'vscode';
import { Commands, JOB_DOCUMENT_SCHEME, Views } from '../platform/constants';
import { Disposable } from '../platform/disposable';
import { once, registerLazyCommands } from '../platform/lazy';
import type { Services } from '../platform/services';
import { JobActions } from './jobActions';
import { JobDocumentsProvider } from './jobDocumentsProvider';
import { JobEndService } from './jobEnds';
import { JobList, type JobListBatches } from '../../core/views/jobList';
import { JobsTreeProvider } from './jobsTree';
import { JobsView } from './jobsView';
import { JobEndNotifier } from './notifications';
import { RememberedJobs } from './rememberedJobs';

export type { JobsNode, JobsTreeProvider } from './jobsTree';
export type { JobsView } from './jobsView';
export type { JobList, JobListBatches } from '../../core/views/jobList';
export type { JobEndService } from './jobEnds';
export type { JobEndNotifier } from './notifications';
export type { RerunOptions, RerunResult } from './jobActions';

/** The commands of JobActions (built at the first of them). */
const JOB_ACTION_COMMANDS = [
  Commands.openJobWorkflow,
  Commands.openJobLogs,
  Commands.openJobError,
  Commands.rerunJob,
  Commands.removeJob,
  Commands.clearFinishedJobs,
  Commands.loadMoreJobs,
  Commands.saveOutputAs,
  Commands.revealOutput,
  Commands.copyOutputAssetReference,
];

/**
 * The one list of jobs (core views/jobList.ts: remembered records merged with the server's listing, the batches, the
 * running count), read again from scratch when the connection's settings change. Built before the connection feature,
 * whose status bar counts the same running jobs; the jobs feature renders it and disposes it.
 */
export function createJobList(services: Services): JobList {
  const { jobs, store, config, display, log } = services;
  return new JobList({
    service: jobs.service,
    onDidChangeJob: jobs.onDidChangeJob,
    onDidChangeJobState: jobs.onDidChangeJobState,
    store,
    activeBaseUrl: () => {
      try {
        return config.surface().baseUrl;
      } catch {
        return undefined;
      }
    },
    onDidChangeSettings: (listener) => config.onDidChange(() => listener()),
    clean: (text) => display.text(text),
    log,
  });
}

/** What the jobs feature is built with, besides the shared services. */
export interface JobsFeatureDeps {
  /** The list built by {@link createJobList} (the feature disposes it). */
  readonly list: JobList;
  /** The batches the list shows (each with its jobs beneath). */
  readonly batches: JobListBatches;
  /** Fires when the active connection answers again (the job ends of jobs that ended meanwhile are handled). */
  readonly onDidReconnect: vscode.Event<void>;
}

/**
 * The jobs feature: the Jobs view and its commands, the end-of-job notification, the one owner of a job's end, the
 * remembered jobs (Copy Job Id from the Command Palette), the job documents (workflow, logs, error) and the job actions (Re-run, Remove, output
 * actions).
 */
export class JobsFeature extends Disposable {
  readonly view: JobsView;
  /** The end-of-job notification: its `onDidDecide` tells each decision. */
  readonly notifier: JobEndNotifier;
  /** The one owner of a job's end (outputs, record, notification), for every remembered job. */
  readonly jobEnds: JobEndService;

  constructor(services: Services, deps: JobsFeatureDeps) {
    super();
    const { jobs, store, outputs, config, display, log } = services;
    const list = this.register(deps.list);
    list.attachBatches(deps.batches);
    const tree = this.register(new JobsTreeProvider(list, display));
    const remembered = once(() => new RememberedJobs(store, jobs.service, log, display));
    this.view = this.register(new JobsView(tree, jobs, outputs, display, log, () => remembered().pickJobId()));
    // "Show Job" reveals the job in the Jobs view.
    this.notifier = this.register(new JobEndNotifier(config, display, log, (jobId) => this.view.revealJob(jobId)));
    // A job's end, whoever saw it (this window's submission, or a reading of the remembered jobs at start-up, on a
    // connection changed or back): its outputs, its record and one notification.
    this.jobEnds = this.register(new JobEndService(jobs, outputs, this.notifier, config, log, deps.onDidReconnect));
    // "Show Jobs" shows the Jobs view; `{list: true}` returns the remembered jobs instead (for tests and other
    // extensions).
    this.register(
      vscode.commands.registerCommand(Commands.showJobs, async (o?: { list?: boolean }) =>
        o?.list ? remembered().list() : void (await vscode.commands.executeCommand(`${Views.jobs}.focus`)),
      ),
    );
    // The documents' provider is registered now (a restored editor asks for its text) and built at its first use.
    const documentsChanged = this.register(new vscode.EventEmitter<vscode.Uri>());
    const documents = once(() => {
      const made = this.register(new JobDocumentsProvider(jobs, tree, services.redactor, display, log));
      this.register(made.onDidChange((uri) => documentsChanged.fire(uri)));
      return made;
    });
    this.register(
      vscode.workspace.registerTextDocumentContentProvider(JOB_DOCUMENT_SCHEME, {
        onDidChange: documentsChanged.event,
        provideTextDocumentContent: (uri) => documents().provideTextDocumentContent(uri),
      }),
    );
    const actions = once(() => this.register(new JobActions(jobs, this.view, documents(), display, log, this.jobEnds)));
    this.register(registerLazyCommands(JOB_ACTION_COMMANDS, () => actions().commands()));
  }
}

/** Registers the jobs feature: the Jobs view, its commands and documents, the job ends and their notification. */
export function register(services: Services, deps: JobsFeatureDeps): JobsFeature {
  return new JobsFeature(services, deps);
}
