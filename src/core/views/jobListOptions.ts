/**
 * What the one list of jobs (jobList.ts) is built with and reads: its options, the batches it shows, the paging of
 * the server's listing, and its bounds.
 */
import type { BatchStore } from '../state/batchRecords';
import type { StateStore } from '../state/stateStore';
import type { EventHook, JobService } from '../jobs/jobService';
import type { JobState } from '../jobs/state';

/** How many jobs of the server's listing are read at first, and how many more each "Load more…" asks for. */
export const LISTING_PAGE_SIZE = 50;

/** A burst of batch events is one read of the records: the first change waits this long (ms) for the rest. */
export const BATCH_RECORDS_DEBOUNCE_MS = 150;

/** What the list reads of the batches (the extension's batch runs and the batch records). */
export interface JobListBatches {
  /** The batch records (the state folder shared with the CLI). */
  readonly store: Pick<BatchStore, 'list'>;
  /** True while a runner of this window runs the batch. */
  isRunning(batchId: string): boolean;
  /** Fires with a batch id whose state changed (a job submitted or ended, the batch canceled, a run started or ended). */
  readonly onDidChange: EventHook<string>;
}

/** What the list is built with. */
export interface JobListOptions {
  /** The job service: each job's state, the lease the listing is read through, one follow per running job. */
  readonly service: Pick<JobService, 'state' | 'use' | 'follow'>;
  /** The job service's events (the job changed; any of its state changed, an outage too). */
  readonly onDidChangeJob: EventHook<JobState>;
  readonly onDidChangeJobState: EventHook<JobState>;
  /** The remembered jobs (shared with the CLI). */
  readonly store: Pick<StateStore, 'prune' | 'list' | 'forget'>;
  /** Fires when the connection's settings or key changed: the list is `JobList.reset` (read anew). */
  readonly onDidChangeSettings?: EventHook<void>;
  /** The active connection's base URL from the settings, or undefined when they are unusable. */
  activeBaseUrl(): string | undefined;
  /** Neutralizes a server string before it is logged. */
  clean(text: string): string;
  readonly log: { info(component: string, message: string): void; warn(component: string, message: string): void };
  /** The wall clock (ms since the epoch); Date.now unless given. */
  readonly now?: () => number;
}

/** The last listing's paging: the limit asked, how many came, whether the server said there are more. */
export interface ListingPage {
  readonly limit: number;
  readonly returned: number;
  readonly truncated: boolean;
}
