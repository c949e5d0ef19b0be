import type * as vscode from 'vscode';
import { spawn, type ChildProcess } from 'node:child_process';
import { isLoopbackHost, surfaceFromBaseUrl } from '../../core/connection';
import { Disposable } from '../platform/disposable';
import type { Log } from '../platform/log';

/** The most bytes of the child's first stdout line read before giving up on it (it is one short URL). */
const MAX_FIRST_LINE = 4096;
/** The most bytes of the child's stderr kept to explain a failed start. */
const MAX_STDERR = 4096;

/** Where the port of the last emulator started is remembered (the extension's global state). */
export interface PortMemory {
  /** The port of the last emulator that started, or undefined. */
  get(): number | undefined;
  set(port: number): Thenable<void> | Promise<void>;
}

/** Options of {@link EmulatorProcess}. */
export interface EmulatorProcessOptions {
  /** The bundled CLI (`dist/cli.js` in the extension's folder; it ships in the .vsix). */
  cliPath: string;
  log: Log;
  /**
   * The emulator's data folder (`--data-dir`; in the extension's global storage): its jobs, outputs and assets are
   * kept there across restarts. None: it keeps them in memory, lost when it stops.
   */
  dataDir?: string;
  /** How long its jobs and outputs are kept after they were created (`--retention-ms`), ms. None: the emulator's 1 hour. */
  retentionMs?: number;
  /** The delay per executed node (`--node-delay-ms`), ms, read at each start. None: 0 (jobs run at once). */
  nodeDelayMs?: () => number;
  /** The port of the last emulator started: asked for again at the next start. None: a free port each time. */
  ports?: PortMemory;
  /** Time allowed until the child prints its base URL, ms. Default 30 000. */
  startTimeoutMs?: number;
  /** Time allowed to exit after SIGTERM before SIGKILL, ms. Default 5 000. */
  stopTimeoutMs?: number;
}

/** The child said its port is taken (the CLI's bad usage for EADDRINUSE). */
class PortInUseError extends Error {}

/**
 * The local emulator as a child process the extension owns ("Start Local Emulator" starts the bundled emulator on
 * loopback, stopped on deactivate). It runs `dist/cli.js emulator --port <port> --host 127.0.0.1 --data-dir <dir>
 * --retention-ms <ms> [--node-delay-ms <ms>]`
 * with the extension host's own Node (`process.execPath`, `ELECTRON_RUN_AS_NODE=1` for desktop VS Code's Electron)
 * and reads the base URL from the child's first stdout line. One child at most: starting again stops the previous
 * one; disposing stops it.
 *
 * A restart is the same emulator again, so the connection "Local emulator" and the jobs remembered for it stay
 * right: its data folder keeps its jobs and outputs, and it asks for the port of the last one that started
 * ({@link EmulatorProcessOptions.ports}); when another program holds that port, it takes a free one (port 0) and
 * remembers that.
 */
export class EmulatorProcess extends Disposable {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private url: string | undefined;
  private startedWith: readonly string[] = [];
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

  /** The arguments of the last child started (after the Node executable), or none. */
  get args(): readonly string[] {
    return this.startedWith;
  }

  /**
   * Stops any running child, starts a new one and resolves its base URL (a loopback http URL).
   * @throws Error when the child cannot start, exits first, prints something that is not a loopback URL, or says
   *   nothing within `startTimeoutMs` (the child is then stopped); the message carries the end of its stderr.
   */
  async start(): Promise<string> {
    await this.stop();
    const remembered = this.options.ports?.get();
    let baseUrl: string;
    try {
      baseUrl = await this.launch(remembered ?? 0);
    } catch (err) {
      if (!(err instanceof PortInUseError) || remembered === undefined) throw err;
      this.options.log.info('emulator', `port ${remembered} is taken by another program: starting on a free port`);
      baseUrl = await this.launch(0);
    }
    const port = Number(new URL(baseUrl).port);
    if (port !== remembered) await this.options.ports?.set(port);
    return baseUrl;
  }

  /** Starts one child on `port` (0: a free one); see {@link start}. @throws PortInUseError when the port is taken. */
  private async launch(port: number): Promise<string> {
    const args = [this.options.cliPath, 'emulator', '--port', String(port), '--host', '127.0.0.1'];
    if (this.options.dataDir !== undefined) args.push('--data-dir', this.options.dataDir);
    if (this.options.retentionMs !== undefined) args.push('--retention-ms', String(this.options.retentionMs));
    const delay = this.options.nodeDelayMs?.() ?? 0;
    if (delay > 0) args.push('--node-delay-ms', String(delay));
    this.startedWith = args;
    const child = spawn(process.execPath, args, {
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
      if (!isLoopbackHost(new URL(surface.baseUrl).hostname))
        throw new Error(`the emulator printed ${JSON.stringify(line.slice(0, 200))}, not a loopback URL`);
      this.url = surface.baseUrl;
      this.options.log.info('emulator', `started (pid ${child.pid}) at ${surface.baseUrl}`);
      this.fire();
      return surface.baseUrl;
    } catch (err) {
      await this.stop();
      // The CLI says "port N on H is in use" (bad usage, exit 2) when the port is taken.
      if (port !== 0 && child.exitCode === 2 && /\bis in use\b/.test(stderr))
        throw new PortInUseError(`port ${port} is in use`);
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
        () =>
          finish(
            new Error(
              `the emulator printed no base URL within ${this.options.startTimeoutMs ?? 30_000} ms${tail(stderr())}`,
            ),
          ),
        this.options.startTimeoutMs ?? 30_000,
      );
      child.stdout!.setEncoding('utf8');
      child.stdout!.on('data', (chunk: string) => {
        if (done) return;
        buffer += chunk;
        const nl = buffer.indexOf('\n');
        if (nl >= 0) finish(undefined, buffer.slice(0, nl).trim());
        else if (buffer.length > MAX_FIRST_LINE)
          finish(new Error('the emulator printed a first line too long to be its base URL'));
      });
      child.once('error', (err) => finish(new Error(`the emulator could not start: ${err.message}`)));
      // 'close', not 'exit': stderr is then complete.
      child.once('close', (code, signal) =>
        finish(
          new Error(`the emulator exited (${signal ?? `code ${code}`}) before printing its base URL${tail(stderr())}`),
        ),
      );
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
