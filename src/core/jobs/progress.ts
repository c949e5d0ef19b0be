/**
 * A job's progress as one number, and the rule that it never goes backwards: the one formula, the one clamp to 0..1
 * and the one ordering of the client; and the rule that only a newer preview frame replaces the one shown. The watches (event streams, sockets and polls alike), the job service, the monitor and the CLI all
 * use these, so a poll that lags the stream, or a node whose steps restart at 0, never moves a bar back. Imports
 * nothing (the monitor's webview script uses it too).
 */
import type { Progress } from './model';

/** The fields the formula reads (a {@link Progress}, or the monitor's copy of one). */
type ProgressFraction = Pick<Progress, 'value' | 'nodesDone' | 'nodesTotal'>;

/**
 * A fraction as shown: clamped to 0..1; null for none, NaN or an infinity (a server's out-of-range value is never shown
 * as-is). The one clamp of the client: the job's progress, the monitor's bar, the graph's node bars.
 */
export function clampFraction(v: number | null | undefined): number | null {
  if (typeof v !== 'number' || !Number.isFinite(v)) return null;
  return Math.min(1, Math.max(0, v));
}

/**
 * How far a job is, in 0..1: the server's `value` when it is a number, else `nodesDone / nodesTotal` when the total is
 * known (and not 0), else null (unknown). Out-of-range values are clamped; NaN and infinities are unknown.
 */
export function progressFraction(p: ProgressFraction | null | undefined): number | null {
  if (!p) return null;
  const raw =
    typeof p.value === 'number' && Number.isFinite(p.value)
      ? p.value
      : p.nodesTotal
        ? (p.nodesDone ?? 0) / p.nodesTotal
        : null;
  return clampFraction(raw);
}

/** The order of two progresses: none at all ranks lowest, a progress of unknown fraction ranks as 0. */
function rank(p: ProgressFraction | null | undefined): number {
  return p ? (progressFraction(p) ?? 0) : -1;
}

/**
 * Progress never goes backwards: `next` when it is at least as far as `prev` ({@link progressFraction}), else `prev`.
 * A missing `next` keeps `prev`. Rule of the client for every job it shows (Job and Asset API v2, "Events": the
 * stream and GET describe the same job, and either may lag the other).
 */
export function laterProgress<P extends ProgressFraction>(
  prev: P | null | undefined,
  next: P | null | undefined,
): P | null {
  if (!next) return prev ?? null;
  return rank(next) >= rank(prev) ? next : (prev ?? null);
}

/** A node's step of its steps, as shown. */
interface ShownStep {
  step: number;
  steps: number;
}

/**
 * The step of a node's steps to show (the graph's bar, the monitor's "Step 21 of 50", the Jobs view's `21/50`): both
 * finite, `steps` above 0, and the step never above the steps nor below 0 (a sampler's last callback, or a server,
 * can report a step past the end: the display says 50 of 50, never 51 of 50). Null when either is missing.
 */
export function shownStep(p: { step?: number | null; steps?: number | null } | null | undefined): ShownStep | null {
  const step = p?.step;
  const steps = p?.steps;
  if (
    typeof step !== 'number' ||
    typeof steps !== 'number' ||
    !Number.isFinite(step) ||
    !Number.isFinite(steps) ||
    steps <= 0
  )
    return null;
  return { step: Math.min(Math.max(0, step), steps), steps };
}

/**
 * Only a newer preview frame replaces the one shown: true when frame `seq` comes after each of `than` (a missing frame
 * is older than any). The one rule of the job service's frames, the monitor's double buffer and its snapshot.
 */
export function isNewerFrame(seq: number, ...than: readonly (number | null | undefined)[]): boolean {
  return than.every((other) => other === null || other === undefined || seq > other);
}
