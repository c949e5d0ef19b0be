/**
 * How the CLI shows a job's progress on stderr, whatever API the job runs on: a progress bar (cli-progress) on a TTY,
 * plain lines otherwise (one per status change and per progress step), nothing with `--quiet`. It reads the job
 * model's updates (core/jobs); every server-chosen string is shown escaped.
 */
import { SingleBar } from 'cli-progress';
import { progressFraction, type JobUpdate } from '../core';
import { shown } from './output';

/** Receives watch updates and renders them. */
export interface ProgressView {
  update(update: JobUpdate): void;
  /** Stops the bar (if any) so later lines print cleanly. */
  stop(): void;
}

/** Plain lines: for pipes, CI logs and files. */
export class LineProgress implements ProgressView {
  private lastLine = '';
  constructor(private readonly write: (line: string) => void) {}

  update(u: JobUpdate): void {
    let line = '';
    if (u.type === 'status')
      line = `status: ${shown(u.status)}${u.status === 'queued' && u.queuePosition != null ? ` (queue position ${u.queuePosition})` : ''}`;
    else if (u.type === 'progress') line = `progress: ${describeProgress(u)}`;
    else if (u.type === 'output')
      line = `output: ${shown(u.output.name ?? u.output.id)} (${shown(u.output.contentType ?? 'unknown type')})`;
    else if (u.type === 'mode' && u.mode === 'polling' && u.reason) line = `note: ${shown(u.reason)}; polling`;
    else if (u.type === 'retrying') line = unreachable(u);
    if (line && line !== this.lastLine) {
      this.lastLine = line;
      this.write(line);
    }
  }

  stop(): void {}
}

/** A one-line bar redrawn in place, for an interactive terminal. */
export class BarProgress implements ProgressView {
  private readonly bar: SingleBar;
  private started = false;
  private status = 'queued';

  constructor(stream: NodeJS.WritableStream) {
    this.bar = new SingleBar({
      stream,
      format: '{status} [{bar}] {percentage}% {detail}',
      barsize: 30,
      hideCursor: true,
      clearOnComplete: false,
      noTTYOutput: false,
    });
  }

  update(u: JobUpdate): void {
    if (!this.started) {
      this.bar.start(100, 0, { status: this.status, detail: '' });
      this.started = true;
    }
    if (u.type === 'status') {
      this.status = shown(u.status);
      this.bar.update({
        status: shown(u.status),
        detail: u.status === 'queued' && u.queuePosition != null ? `queue position ${u.queuePosition}` : '',
      });
    } else if (u.type === 'retrying') {
      this.bar.update({ status: this.status, detail: unreachable(u) });
    } else if (u.type === 'progress') {
      this.bar.update(Math.round((progressFraction(u.progress) ?? 0) * 100), {
        status: this.status,
        detail: describeProgress(u),
      });
    }
  }

  stop(): void {
    if (this.started) this.bar.stop();
    this.started = false;
  }
}

function describeProgress(u: Extract<JobUpdate, { type: 'progress' }>): string {
  const p = u.progress;
  const parts: string[] = [];
  if (p.nodesTotal) parts.push(`node ${p.nodesDone ?? 0}/${p.nodesTotal}`);
  if (p.message) parts.push(shown(p.message));
  else if (p.currentNodeClass)
    parts.push(`${shown(p.currentNodeClass)}${p.currentNode ? ` #${shown(p.currentNode)}` : ''}`);
  if (p.value != null) parts.push(`${Math.round(p.value * 100)}%`);
  return parts.join(' · ');
}

/** The line for a watch riding out an outage: the server's failure, and when the next try is. */
export function unreachable(u: Extract<JobUpdate, { type: 'retrying' }>): string {
  return `server unreachable (${shown(u.reason)}), retrying in ${Math.ceil(u.delayMs / 1000)} s`;
}
