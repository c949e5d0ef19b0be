/**
 * What the job service holds of one job ({@link JobState}) and how a server answer or a watch update changes it: pure
 * functions, so each rule is tested without a server. The server's answer is the source of truth (Job and Asset API
 * v2, design rule 1: the stream is a live enhancement); between answers the stream's news is merged in, progress
 * never going backwards ({@link laterProgress}).
 */
import type { JobCapabilities, JobUpdate } from './backend';
import { isTerminalStatus, type Job, type Preview } from './model';
import { laterProgress } from './progress';

/** A preview frame with its place in the job's sequence of frames (a later frame has a higher `seq`). */
interface JobPreview extends Preview {
  seq: number;
}

/** A watch riding out an outage: why its reads fail, since when (ms since the epoch), and the wait before the next (ms). */
export interface JobOutage {
  reason: string;
  failingSinceMs: number;
  retryInMs: number;
}

/**
 * One job as the job service knows it, published whenever it changes: the job (the server's last answer with the
 * stream's news since: live progress, new outputs, the queue position), the latest preview frame, and the outage its
 * watch is riding out (null while reads succeed). A terminal status in `job` was confirmed by the server's read.
 */
export interface JobState {
  /** The base URL of its server (jobs of two servers never mix). */
  readonly baseUrl: string;
  readonly job: Job;
  /** What the API that watches it can do (e.g. whether its outputs are assets). */
  readonly capabilities: JobCapabilities;
  /** The request id of the last answer that described it. */
  readonly requestId: string | undefined;
  readonly preview: JobPreview | null;
  readonly outage: JobOutage | null;
}

/**
 * The job after a server answer `next` when `prev` was known: `next` as is, except that while the status stays the
 * same non-terminal one, progress never goes backwards and outputs already seen on the stream are kept (a poll may
 * lag the stream). A terminal answer is taken whole (the final state is always the server's own), keeping only what
 * it does not carry: the `logs` of the same ended job read before (Job and Asset API v2, Rules for `logs`, rule 4:
 * only GET returns them) and the progress reached ({@link endedAnswer}).
 */
export function mergeAnswer(prev: Job | undefined, next: Job): Job {
  if (prev && isTerminalStatus(next.status)) return endedAnswer(prev, next);
  if (!prev || prev.status !== next.status) return next;
  let job = next;
  const progress = laterProgress(prev.progress, next.progress);
  if (progress !== next.progress) job = { ...job, progress };
  const ids = new Set(next.outputs.map((o) => o.id));
  const extra = prev.outputs.filter((o) => !ids.has(o.id));
  if (extra.length > 0) job = { ...job, outputs: [...job.outputs, ...extra] };
  return job;
}

/**
 * A terminal answer `next` taken whole, keeping of `prev` only what the answer does not carry: the `logs` of the same
 * ended job (a cancel's answer or a listing has none), and the progress reached, when the answer has none (an ended
 * job's bar stays where it got to, never emptied: progress never goes backwards).
 */
function endedAnswer(prev: Job, next: Job): Job {
  let job = next;
  if (prev.status === next.status && next.logs === undefined && prev.logs !== undefined)
    job = { ...job, logs: prev.logs };
  if (!next.progress && prev.progress) job = { ...job, progress: prev.progress };
  return job;
}

/**
 * The job after the server's listing described it as `listed` when `prev` was known (the same object when the
 * listing changes nothing): a job never seen takes the listing's; a job that ended keeps its state (an ended job no
 * longer changes, and the GET's copy has its `logs`, which a listing never has); a listing saying the job ended is
 * taken (with the progress reached, {@link endedAnswer}); a job in flight that a watch follows (`watched`) keeps the watch's state (the stream is fresher than a
 * listing read before it); else the listing is an answer like any other ({@link mergeAnswer}): a job the client
 * marked `lost` (not watched, another status) takes the listing's, the server knowing it again.
 */
export function mergeListed(prev: Job | undefined, listed: Job, watched: boolean): Job {
  if (!prev) return listed;
  if (isTerminalStatus(prev.status)) return prev;
  if (isTerminalStatus(listed.status)) return endedAnswer(prev, listed);
  return watched ? prev : mergeAnswer(prev, listed);
}

/**
 * The job after a watch update (the same object when nothing changed): a non-terminal status (with its queue
 * position) of a job not yet terminal, a progress at least as far as the job's, an output not yet listed. A terminal
 * status is never taken from an update: only a server answer confirms it ({@link mergeAnswer}). Previews, modes and
 * retries do not change the job.
 */
export function applyUpdate(job: Job, update: JobUpdate): Job {
  switch (update.type) {
    case 'status':
      if (isTerminalStatus(update.status) || isTerminalStatus(job.status)) return job;
      if (job.status === update.status && job.queuePosition === update.queuePosition) return job;
      return { ...job, status: update.status, queuePosition: update.queuePosition };
    case 'progress': {
      const progress = laterProgress(job.progress, update.progress);
      return progress === job.progress ? job : { ...job, progress };
    }
    case 'output':
      return job.outputs.some((o) => o.id === update.output.id)
        ? job
        : { ...job, outputs: [...job.outputs, update.output] };
    default:
      return job;
  }
}
