/**
 * The one list of jobs the extension shows, without `vscode`: the jobs remembered on this machine (the state store,
 * shared with the CLI) for the active server, merged with the server's listing where its API lists jobs, the batch
 * records, and the count of running jobs. The Jobs tree, its badge, the status bar's count and the batch items all
 * render it; none keeps a copy.
 *
 * It keeps which jobs it shows and their records, never a job's state: each entry's state (status, progress, outputs,
 * outage) is the job service's (`JobService.state`), read when an entry is asked for. It follows every running
 * job it shows (one shared watch per job; the follow is released when the job ends or the list is disposed) and
 * publishes each change in the tick the job service's state changed.
 */
import { AbortError, describeError } from '../http/errors';
import type { BatchRecord } from '../state/batchRecords';
import type { JobRecord } from '../state/stateStore';
import { isLostStatus, isTerminalStatus, type Job } from '../jobs/model';
import { ListenerSet, type EventHook, type JobFollow, type Subscription } from '../jobs/jobService';
import type { JobState } from '../jobs/state';
import { HiddenJobs, entryKey, groupOf, liveEntry, mergeEntries, needsFollow, type JobEntry } from './jobEntries';
import { RECENT_PAGE_SIZE, type BatchView } from './jobTree';
import type { JobListBatches, JobListOptions, ListingPage } from './jobListOptions';
import { BATCH_RECORDS_DEBOUNCE_MS, LISTING_PAGE_SIZE } from './jobListOptions';

export * from './jobListOptions';

/** What the list keeps of a job: which job it is (its server, its id) and its remembered submission; never its state. */
interface Shown {
  readonly baseUrl: string;
  readonly jobId: string | undefined;
  record?: JobRecord;
}

/**
 * The list of jobs (see the file's comment). {@link onDidChange} fires with an entry's key ({@link entryKey}) when
 * that entry changed, or undefined when the list's shape changed (a job appeared, left, or the list was read again);
 * {@link onDidChangeRunning} with the running count whenever it changes.
 */
export class JobList implements Subscription {
  private readonly changed: ListenerSet<string | undefined>;
  /** An entry changed (its key), or the whole list (undefined). */
  readonly onDidChange: EventHook<string | undefined>;
  private readonly running: ListenerSet<number>;
  /** The count of the active connection's running jobs ({@link runningCount}), whenever it changes. */
  readonly onDidChangeRunning: EventHook<number>;

  /** The jobs shown (newest first), by entry key. */
  private shown = new Map<string, Shown>();
  /** Jobs removed from the list that the server still lists (hidden for the session, or until they change). */
  private readonly hidden = new HiddenJobs();
  /** Entries without a record whose records were read again at their job's end (see onState): once each. */
  private readonly endLookups = new Set<string>();
  private listingLimit = LISTING_PAGE_SIZE;
  private shownRecent = RECENT_PAGE_SIZE;
  private batchTimer: ReturnType<typeof setTimeout> | undefined;
  private page: ListingPage | undefined;
  private readonly follows = new Map<string, JobFollow>();
  private shownBaseUrl: string | undefined;
  private loading: Promise<void> | undefined;
  private loaded = false;
  /** Bumped by every reset: a read started before it (another connection's jobs) is dropped when it ends. */
  private generation = 0;
  /** The count last told through {@link onDidChangeRunning} (-1: none yet). */
  private toldRunning = -1;
  /** The state last told by `onDidChangeJob`: the same one told again by `onDidChangeJobState` is not news. */
  private lastJobChange: JobState | undefined;
  private batchSource: JobListBatches | undefined;
  /** The batch records read with the jobs (every server's; {@link batches} gives the shown server's). */
  private batchRecords: BatchRecord[] = [];
  private readonly subscriptions: Subscription[] = [];

  constructor(private readonly options: JobListOptions) {
    // A listener that throws is logged; the others are still told.
    const onError = (err: unknown): void =>
      options.log.warn('jobs-view', `a listener of the job list failed: ${describeError(err)}`);
    this.changed = new ListenerSet(onError);
    this.onDidChange = this.changed.event;
    this.running = new ListenerSet(onError);
    this.onDidChangeRunning = this.running.event;
    // The job's changes as soon as they are told (before the state's other listeners); the state's other changes
    // (an outage begun or ended) too.
    this.subscriptions.push(options.onDidChangeJob((change) => this.onState((this.lastJobChange = change))));
    this.subscriptions.push(
      options.onDidChangeJobState((change) => change !== this.lastJobChange && this.onState(change)),
    );
    if (options.onDidChangeSettings) this.subscriptions.push(options.onDidChangeSettings(() => this.reset()));
    // Records past their job's expires_at are dropped at start (and on every load), shown or not.
    void options.store
      .prune()
      .catch((err: unknown) => options.log.warn('jobs-view', `pruning expired jobs failed: ${describeError(err)}`));
  }

  /** The base URL of the server whose jobs are shown (undefined before the first read, or after a reset). */
  get baseUrl(): string | undefined {
    return this.shownBaseUrl;
  }

  /** The last listing's paging (undefined: no listing read). */
  get listing(): ListingPage | undefined {
    return this.page;
  }

  /** True once the list was read (an entry may still be added by a job's change before). */
  get isLoaded(): boolean {
    return this.loaded;
  }

  /** How many Recent jobs are shown ("Load more…" grows it). */
  get recentLimit(): number {
    return this.shownRecent;
  }

  /**
   * Shows batches from now on, each as one item with its jobs beneath; the batch records are read again on `source`'s
   * changes, once per {@link BATCH_RECORDS_DEBOUNCE_MS}.
   */
  attachBatches(source: JobListBatches): void {
    this.batchSource = source;
    this.subscriptions.push(source.onDidChange(() => this.batchChanged()));
    if (this.loaded) this.batchChanged();
  }

  /** Reads the records (jobs and batches) again soon, once for a burst of batch events. */
  private batchChanged(): void {
    this.batchTimer ??= setTimeout(() => {
      this.batchTimer = undefined;
      void this.reloadBatches();
    }, BATCH_RECORDS_DEBOUNCE_MS);
  }

  /**
   * How many of the active connection's jobs run now (the badge's count; 0 before the first read), counted from the
   * job service's states at the moment it is read.
   */
  get runningCount(): number {
    let running = 0;
    for (const entry of this.entries()) if (groupOf(entry) === 'running') running++;
    return running;
  }

  /** Every entry shown, as it stands now (the job service's state), in order. */
  entries(): JobEntry[] {
    const now = this.now();
    return [...this.shown.values()].map((s) => this.entry(s, now));
  }

  /** The entry of the job whose entry key is `key`, as it stands now. */
  entryOfKey(key: string): JobEntry | undefined {
    const shown = this.shown.get(key);
    return shown && this.entry(shown);
  }

  /** The entry of a job id shown now, as it stands now. */
  entryOfJob(jobId: string): JobEntry | undefined {
    const shown = [...this.shown.values()].find((e) => e.jobId === jobId);
    return shown && this.entry(shown);
  }

  /** True when no job is shown. */
  get isEmpty(): boolean {
    return this.shown.size === 0;
  }

  /** The batches of the shown server, each with whether a runner of this window runs it. */
  batches(): BatchView[] {
    const source = this.batchSource;
    if (!source || this.shownBaseUrl === undefined) return [];
    return this.batchRecords
      .filter((b) => b.baseUrl === this.shownBaseUrl)
      .map((batch) => ({ batch, running: source.isRunning(batch.batchId) }));
  }

  /** The first read (shared), or a read again after {@link refresh}/{@link reset}. Never rejects: failures are logged. */
  load(): Promise<void> {
    if (this.loaded) return Promise.resolve();
    if (this.loading) return this.loading;
    const generation = this.generation;
    const loading = this.read(generation)
      .then(
        () => {
          if (generation !== this.generation) return;
          this.loaded = true;
          // A job heard of while the store was read (its events came before `loaded`) left its pending submission
          // read as such, with no later event to replace it: the records are read again once.
          if (this.hasSubmissionWithoutJob()) void this.mergeRecords();
        },
        (err: unknown) => {
          if (!AbortError.is(err)) this.options.log.warn('jobs-view', `cannot read the jobs: ${describeError(err)}`);
          if (generation === this.generation) this.loaded = true; // shown empty; Refresh tries again
        },
      )
      .finally(() => {
        if (this.loading === loading) this.loading = undefined;
      });
    this.loading = loading;
    return loading;
  }

  /** Reads the store and the server's listing again (Refresh). Resolves when the list holds them. */
  async refresh(): Promise<void> {
    this.loaded = false;
    await this.load();
    this.tell(undefined);
  }

  /**
   * "Load more…": shows {@link RECENT_PAGE_SIZE} more Recent jobs and, when the server's listing was truncated, asks
   * for a page {@link LISTING_PAGE_SIZE} longer (the listing has no cursor, only `limit`). Resolves when the list holds
   * them.
   */
  async loadMore(): Promise<void> {
    this.shownRecent += RECENT_PAGE_SIZE;
    if (this.page?.truncated) {
      this.listingLimit = this.page.limit + LISTING_PAGE_SIZE;
      this.loaded = false;
      await this.load();
    }
    this.tell(undefined);
  }

  /**
   * Removes entries: each one's record is forgotten from the state store (shared with the CLI), and a job the server
   * still lists is hidden for the session or until it changes. Returns how many were removed.
   * @throws ComfyError `state_locked` when a record stays locked by another process (the others are removed).
   */
  async remove(entries: readonly JobEntry[]): Promise<number> {
    let removed = 0;
    let failure: unknown;
    for (const entry of entries) {
      const key = entryKey(entry);
      try {
        if (entry.record) await this.options.store.forget(entry.record.idempotencyKey);
      } catch (err) {
        failure ??= err;
        continue;
      }
      if (entry.jobId) this.hidden.hide(key, entry.job);
      this.follows.get(key)?.dispose();
      this.follows.delete(key);
      if (this.shown.delete(key)) removed++;
    }
    if (removed > 0) this.tell(undefined);
    if (failure !== undefined) throw failure;
    return removed;
  }

  /** Forgets everything (the connection's settings or key changed); the next look reads anew. */
  reset(): void {
    this.generation++;
    this.loading = undefined;
    this.stopAll();
    this.shown.clear();
    this.endLookups.clear();
    this.loaded = false;
    this.shownBaseUrl = undefined;
    this.page = undefined;
    this.listingLimit = LISTING_PAGE_SIZE;
    this.shownRecent = RECENT_PAGE_SIZE;
    this.tell(undefined);
  }

  /**
   * Reads the batch records and the job records of batches again: a variation's job just submitted by a runner (no
   * watch event of the job service names it) is added, a record's new last status is taken.
   */
  async reloadBatches(): Promise<void> {
    if (!this.loaded || this.shownBaseUrl === undefined) return;
    const baseUrl = this.shownBaseUrl;
    try {
      const [batches, records] = await Promise.all([
        this.batchSource?.store.list() ?? Promise.resolve([]),
        this.options.store.list(),
      ]);
      if (baseUrl !== this.shownBaseUrl) return;
      this.batchRecords = batches;
      for (const record of records) {
        if (record.baseUrl !== baseUrl || record.batchId === undefined) continue;
        const key = entryKey({ baseUrl, jobId: record.jobId, record });
        // A submission read while pending gives way to its job's entry.
        if (record.jobId) this.shown.delete(entryKey({ baseUrl, jobId: undefined, record }));
        const shown = this.shown.get(key);
        if (shown) shown.record = record;
        else this.shown.set(key, { baseUrl, jobId: record.jobId, record });
      }
      this.tell(undefined);
      this.updateFollows();
    } catch (err) {
      this.options.log.warn('jobs-view', `cannot read the batches: ${describeError(err)}`);
    }
  }

  dispose(): void {
    this.stopAll();
    if (this.batchTimer) clearTimeout(this.batchTimer);
    for (const s of this.subscriptions.splice(0)) s.dispose();
    this.changed.dispose();
    this.running.dispose();
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** A job as it stands now: what the list keeps of it, with the job service's state (the one source). */
  private entry(shown: Shown, now = this.now()): JobEntry {
    return liveEntry(
      shown,
      shown.jobId === undefined ? undefined : this.options.service.state(shown.baseUrl, shown.jobId),
      now,
    );
  }

  /** Reads the store (this server's records, expired ones pruned) and the server's listing, then follows running jobs. */
  private async read(generation: number): Promise<void> {
    const { service, store, log } = this.options;
    await store.prune().catch(() => 0);
    // The listing goes through the lease's backend: each listed job's state is the job service's from then on.
    const { baseUrl, listing, page } = await service.use(async (lease) => {
      const { backend } = lease;
      let jobs: Job[] = [];
      const limit = this.listingLimit;
      let shape: ListingPage | undefined;
      // An API that lists no jobs (capabilities.list): the remembered ones are shown alone, nothing is asked.
      if (!backend.capabilities.list) return { baseUrl: backend.baseUrl, listing: jobs, page: shape };
      try {
        const answer = await backend.list({ limit, signal: lease.signal });
        jobs = answer.jobs;
        shape = { limit, returned: answer.jobs.length, truncated: answer.truncated };
      } catch (err) {
        // Not every surface lists jobs: the remembered ones are shown alone.
        if (AbortError.is(err)) throw err;
        log.info('jobs-view', `no job listing from the server (${describeError(err)})`);
      }
      return { baseUrl: backend.baseUrl, listing: jobs, page: shape };
    });
    const records = await store.list();
    const batches = (await this.batchSource?.store.list().catch(() => [])) ?? [];
    // The connection changed while this read ran: its jobs are another server's, and the next look reads anew.
    if (generation !== this.generation) return;
    this.page = page;
    if (this.shownBaseUrl !== undefined && this.shownBaseUrl !== baseUrl) {
      this.stopAll();
      this.shown.clear();
    }
    this.shownBaseUrl = baseUrl;
    this.batchRecords = batches;
    // Which jobs show, and in which order (records past expires_at are left out even when the prune could not drop
    // them); what each one is comes from the job service when it is asked for.
    const merged = mergeEntries(baseUrl, records, listing, new Map(this.entries().map((e) => [entryKey(e), e])), {
      now: this.now(),
      hidden: this.hidden,
    });
    this.shown = new Map(merged.map((e) => [entryKey(e), { baseUrl: e.baseUrl, jobId: e.jobId, record: e.record }]));
    this.tell(undefined);
    this.updateFollows();
  }

  /**
   * The job service's state of a job changed (its job, its outage): the active connection's entry changes (it
   * appears when new), and the running count follows at once.
   */
  private onState(change: JobState): void {
    // Only the active connection's jobs: before the first read (or after a switch) its base URL comes from settings.
    if (change.baseUrl !== (this.shownBaseUrl ?? this.options.activeBaseUrl())) return;
    const key = entryKey({ baseUrl: change.baseUrl, jobId: change.job.id });
    // A job removed from the list stays out until it changes.
    if (this.hidden.isHidden(key, change.job)) return;
    const shown = this.shown.get(key);
    if (!shown) {
      // A job just submitted (from this window), or read: shown at once; its record (workflow file) is read in the
      // background.
      this.shown = new Map([[key, { baseUrl: change.baseUrl, jobId: change.job.id }], ...this.shown]);
      this.tell(undefined);
      if (this.loaded) void this.mergeRecords();
    } else {
      this.tell(key);
      // A read of the store may have caught this job's submission still pending (no job id yet): that entry, keyed by
      // its Idempotency-Key, would stay under Running forever; the records are read again to let it give way. An
      // entry shown before its submission wrote the job's id into its record (a listing read between the two) is
      // looked up once more when its job ends or is lost: the record's workflow file is what Re-run needs.
      if (this.loaded && !shown.record) {
        const ended = isTerminalStatus(change.job.status) || isLostStatus(change.job.status);
        const endLookup = ended && !this.endLookups.has(key);
        if (endLookup) this.endLookups.add(key);
        if (endLookup || this.hasSubmissionWithoutJob()) void this.mergeRecords();
      }
    }
    this.updateFollows();
  }

  /** True when an entry is a remembered submission without a job id yet (keyed by its Idempotency-Key). */
  private hasSubmissionWithoutJob(): boolean {
    for (const shown of this.shown.values()) if (shown.jobId === undefined) return true;
    return false;
  }

  /**
   * Joins the store's records to entries that have none yet (e.g. a job just submitted), and replaces the entry of a
   * submission read while pending (keyed by its Idempotency-Key) by its job's once its record has the job id: one
   * entry per job, and no pending ghost counted under Running.
   */
  private async mergeRecords(): Promise<void> {
    try {
      const records = await this.options.store.list();
      let reshaped = false;
      for (const record of records) {
        if (!record.jobId) continue;
        const key = entryKey({ baseUrl: record.baseUrl, jobId: record.jobId });
        const pending = entryKey({ baseUrl: record.baseUrl, jobId: undefined, record });
        if (this.shown.delete(pending)) {
          reshaped = true;
          if (!this.shown.has(key)) this.shown.set(key, { baseUrl: record.baseUrl, jobId: record.jobId, record });
        }
        const shown = this.shown.get(key);
        if (shown && !shown.record) {
          shown.record = record;
          this.tell(key);
        }
      }
      if (reshaped) {
        this.tell(undefined);
        this.updateFollows();
      }
    } catch (err) {
      this.options.log.warn('jobs-view', `cannot read the remembered jobs: ${describeError(err)}`);
    }
  }

  /** Follows every running job shown that is not followed yet; the follow ends with the job (or the list). */
  private updateFollows(): void {
    const now = this.now();
    for (const [key, shown] of this.shown) {
      if (this.follows.has(key) || shown.jobId === undefined || !needsFollow(this.entry(shown, now))) continue;
      const jobId = shown.jobId;
      // The job's end comes as its state, like every change of it: the follow only keeps the one watch going.
      const follow = this.options.service.follow(jobId);
      this.follows.set(key, follow);
      follow.done
        .then(
          () => undefined,
          (err: unknown) => {
            if (!AbortError.is(err))
              this.options.log.warn('jobs-view', `job ${this.options.clean(jobId)}: ${describeError(err)}`);
          },
        )
        .finally(() => {
          if (this.follows.get(key) === follow) this.follows.delete(key);
        });
    }
  }

  private stopAll(): void {
    for (const follow of this.follows.values()) follow.dispose();
    this.follows.clear();
  }

  /** Publishes a change (an entry's key, or undefined for the whole list), then the running count if it changed. */
  private tell(key: string | undefined): void {
    this.changed.fire(key);
    this.tellRunning();
  }

  /** Tells the running count ({@link onDidChangeRunning}) when it is not the one told last. */
  tellRunning(): void {
    const running = this.runningCount;
    if (running === this.toldRunning) return;
    this.toldRunning = running;
    this.running.fire(running);
  }
}
