/**
 * How the CLI shows a job's progress on stderr: a progress bar (cli-progress) on a TTY, plain lines otherwise
 * (one per status change and per progress step), nothing with `--quiet`. Every server-chosen string is shown escaped.
 */
import { SingleBar } from 'cli-progress';
import type { WatchUpdate } from '../core';
import { shown } from './output';

/** Receives watch updates and renders them. */
export interface ProgressView {
  update(update: WatchUpdate): void;
  /** Stops the bar (if any) so later lines print cleanly. */
  stop(): void;
}

/** Plain lines: for pipes, CI logs and files. */
export class LineProgress implements ProgressView {
  private lastLine = '';
  constructor(private readonly write: (line: string) => void) {}

  update(u: WatchUpdate): void {
    let line = '';
    if (u.type === 'status') line = `status: ${shown(u.status)}${u.status === 'queued' && u.queuePosition != null ? ` (queue position ${u.queuePosition})` : ''}`;
    else if (u.type === 'progress') line = `progress: ${describeProgress(u)}`;
    else if (u.type === 'output') line = `output: ${shown(u.output.name ?? u.output.id)} (${shown(u.output.content_type ?? 'unknown type')})`;
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

  update(u: WatchUpdate): void {
    if (!this.started) {
      this.bar.start(100, 0, { status: this.status, detail: '' });
      this.started = true;
    }
    if (u.type === 'status') {
      this.status = shown(u.status);
      this.bar.update({ status: shown(u.status), detail: u.status === 'queued' && u.queuePosition != null ? `queue position ${u.queuePosition}` : '' });
    } else if (u.type === 'retrying') {
      this.bar.update({ status: this.status, detail: unreachable(u) });
    } else if (u.type === 'progress') {
      this.bar.update(Math.round(Math.min(1, Math.max(0, u.progress.value ?? 0)) * 100), { status: this.status, detail: describeProgress(u) });
    }
  }

  stop(): void {
    if (this.started) this.bar.stop();
    this.started = false;
  }
}

function describeProgress(u: Extract<WatchUpdate, { type: 'progress' }>): string {
  const p = u.progress;
  const parts: string[] = [];
  if (p.nodes_total) parts.push(`node ${p.nodes_done ?? 0}/${p.nodes_total}`);
  if (p.message) parts.push(shown(p.message));
  else if (p.current_node_class) parts.push(`${shown(p.current_node_class)}${p.current_node ? ` #${shown(p.current_node)}` : ''}`);
  if (p.value != null) parts.push(`${Math.round(p.value * 100)}%`);
  return parts.join(' · ');
}

/** The line for a watch riding out an outage: the server's failure, and when the next try is. */
export function unreachable(u: Extract<WatchUpdate, { type: 'retrying' }>): string {
  return `server unreachable (${shown(u.reason)}), retrying in ${Math.ceil(u.delayMs / 1000)} s`;
}
