import type * as vscode from 'vscode';
import { spawn, type ChildProcess } from 'node:child_process';
import { isLoopbackHost, surfaceFromBaseUrl } from '../core';
import { Disposable } from './disposable';
import type { Log } from './log';

/** The most bytes of the child's first stdout line read before giving up on it (it is one short URL). */
const MAX_FIRST_LINE = 4096;
/** The most bytes of the child's stderr kept to explain a failed start. */
const MAX_STDERR = 4096;

/** Options of {@link EmulatorProcess}. */
export interface EmulatorProcessOptions {
  /** The bundled CLI (`dist/cli.js` in the extension's folder; it ships in the .vsix). */
  cliPath: string;
  log: Log;
  /** Time allowed until the child prints its base URL, ms. Default 30 000. */
  startTimeoutMs?: number;
  /** Time allowed to exit after SIGTERM before SIGKILL, ms. Default 5 000. */
  stopTimeoutMs?: number;
}

/**
 * The local emulator as a child process the extension owns ("Start Local Emulator" starts
 * the bundled emulator on a free loopback port, stopped on deactivate). It runs `dist/cli.js emulator --port 0
 * --host 127.0.0.1` with the extension host's own Node (`process.execPath`, `ELECTRON_RUN_AS_NODE=1` for desktop
 * VS Code's Electron) and reads the base URL from the child's first stdout line. One child at most: starting again
 * stops the previous one; disposing stops it.
 */
export class EmulatorProcess extends Disposable {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private url: string | undefined;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly options: EmulatorProcessOptions) {
    super();
    // Deactivation stops the child: the signal is sent at once; the exit is not waited for.
    this.register({ dispose: () => void this.stop() });
  }

  /**
   * Calls `listener` after a child started (its base URL is known) and after one stopped or died (the status bar
   * then re-checks whether the "Local emulator" connection is stale). Dispose the result to stop.
   */
  onDidChange(listener: () => void): vscode.Disposable {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  private fire(): void {
    for (const listener of [...this.listeners]) {
      try {
        listener();
      } catch {
        // one listener's failure must not keep the others from hearing
      }
    }
  }

  /** The running child's pid, or undefined. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The running child's base URL, or undefined. */
  get baseUrl(): string | undefined {
    return this.url;
  }

  /**
   * Stops any running child, starts a new one and resolves its base URL (a loopback http URL).
   * @throws Error when the child cannot start, exits first, prints something that is not a loopback URL, or says
   *   nothing within `startTimeoutMs` (the child is then stopped); the message carries the end of its stderr.
   */
  async start(): Promise<string> {
    await this.stop();
    const child = spawn(process.execPath, [this.options.cliPath, 'emulator', '--port', '0', '--host', '127.0.0.1'], {
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
    });
    this.child = child;
    this.exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('close', () => resolve());
    });
    child.once('close', () => {
      if (this.child === child) {
        this.child = undefined;
        const had = this.url !== undefined;
        this.url = undefined;
        // A child that died on its own: whoever shows its connection hears it.
        if (had) this.fire();
      }
    });
    let stderr = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-MAX_STDERR);
      for (const line of chunk.split('\n')) if (line.trim()) this.options.log.info('emulator', line.trimEnd());
    });
    try {
      const line = await this.firstLine(child, () => stderr);
      const surface = surfaceFromBaseUrl(line);
      if (!isLoopbackHost(new URL(surface.baseUrl).hostname)) throw new Error(`the emulator printed ${JSON.stringify(line.slice(0, 200))}, not a loopback URL`);
      this.url = surface.baseUrl;
      this.options.log.info('emulator', `started (pid ${child.pid}) at ${surface.baseUrl}`);
      this.fire();
      return surface.baseUrl;
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  /** Resolves the child's first stdout line (bounded), then keeps draining stdout so the child never blocks. */
  private firstLine(child: ChildProcess, stderr: () => string): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      let buffer = '';
      let done = false;
      const finish = (err: Error | undefined, line?: string): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (err) reject(err);
        else resolve(line!);
      };
      const timer = setTimeout(
        () => finish(new Error(`the emulator printed no base URL within ${this.options.startTimeoutMs ?? 30_000} ms${tail(stderr())}`)),
        this.options.startTimeoutMs ?? 30_000,
      );
      child.stdout!.setEncoding('utf8');
      child.stdout!.on('data', (chunk: string) => {
        if (done) return;
        buffer += chunk;
        const nl = buffer.indexOf('\n');
        if (nl >= 0) finish(undefined, buffer.slice(0, nl).trim());
        else if (buffer.length > MAX_FIRST_LINE) finish(new Error('the emulator printed a first line too long to be its base URL'));
      });
      child.once('error', (err) => finish(new Error(`the emulator could not start: ${err.message}`)));
      // 'close', not 'exit': stderr is then complete.
      child.once('close', (code, signal) => finish(new Error(`the emulator exited (${signal ?? `code ${code}`}) before printing its base URL${tail(stderr())}`)));
    });
  }

  /** Stops the child (SIGTERM, then SIGKILL after `stopTimeoutMs`) and resolves once it has exited. Idempotent. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return this.exited;
    this.child = undefined;
    this.url = undefined;
    const exited = this.exited;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), this.options.stopTimeoutMs ?? 5_000);
    await exited;
    clearTimeout(timer);
    this.options.log.info('emulator', `stopped (pid ${child.pid})`);
    this.fire();
  }

  /** Resolves once the last child started has exited (at once when none runs). */
  whenExited(): Promise<void> {
    return this.exited;
  }
}

function tail(stderr: string): string {
  const text = stderr.trim();
  return text ? `: ${text.slice(-500)}` : '';
}
