/**
 * The shipped CLI (`node dist/cli.js`) as a child process of a test: its stdout lines as they come, its stderr, its
 * exit, and a SIGKILL (a process killed at any point, as a crash would).
 */
import { spawn } from 'node:child_process';

/** A running CLI process. */
export interface CliRun {
  /** The stdout lines printed so far. */
  lines: string[];
  /** The stderr printed so far. */
  stderr: () => string;
  /** The exit code; null when a signal ended it. */
  exited: Promise<number | null>;
  /** Ends it with SIGKILL. */
  kill(): void;
}

/** Where and how a {@link startCli} process runs. */
export interface CliStart {
  /** The CLI's entry (dist/cli.js). */
  cli: string;
  /** Extra environment; the caller's `COMFY_*` variables are removed first. */
  env: Record<string, string>;
  cwd: string;
  /** Told each stdout line as it comes, with the lines so far. */
  onLine?: (line: string, lines: string[]) => void;
}

/** Starts `node <cli> <args>`. */
export function startCli(args: string[], options: CliStart): CliRun {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('COMFY_')));
  const child = spawn(process.execPath, [options.cli, ...args], {
    env: { ...clean, ...options.env },
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let partial = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    partial += d.toString();
    const parts = partial.split('\n');
    partial = parts.pop()!;
    for (const line of parts) {
      lines.push(line);
      options.onLine?.(line, lines);
    }
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { lines, stderr: () => stderr, exited, kill: () => child.kill('SIGKILL') };
}
