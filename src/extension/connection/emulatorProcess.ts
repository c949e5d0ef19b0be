import type * as vscode from 'vscode';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { EMULATOR_OWNER_TOKEN_ENV, isLoopbackHost, surfaceFromBaseUrl } from '../../core/connection';
import { isProcessAlive } from '../../core/state';
import { Disposable } from '../platform/disposable';
import type { Log } from '../platform/log';
import {
  askToStop,
  holdEmulator,
  readRecord,
  removeRecord,
  writeRecord,
  type EmulatorRecord,
  type OwnerHold,
} from './emulatorOwner';

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
  /** Time allowed to exit after SIGTERM (or the owner's stop) before SIGKILL, ms. Default 5 000. */
  stopTimeoutMs?: number;
  /**
   * Where the running emulator is recorded (emulatorOwner.ts; in the extension's global storage), so that the next
   * window, or another one, holds it: the emulator then outlives this window. None: disposing stops it.
   */
  recordFile?: string;
  /** How long the emulator runs on once no window holds it (`--owner-grace-ms`), ms. Default 60 000. */
  ownerGraceMs?: number;
  /** Time allowed to hold a running emulator before it is taken for gone, ms. Default 3 000. */
  holdTimeoutMs?: number;
  /** Waits `ms` (tests inject their own): between checks that a stopped emulator has exited. */
  sleep?: (ms: number) => Promise<void>;
}

/** The child said its port is taken (the CLI's bad usage for EADDRINUSE). */
class PortInUseError extends Error {}

/** How long the emulator runs on once no window holds it (ms): a window reload takes far less. */
const OWNER_GRACE_MS = 60_000;
/** How long holding a running emulator may take before it is taken for gone (ms). */
const HOLD_TIMEOUT_MS = 3_000;
/** After the hold on the emulator was lost, when this window looks for a running one again (ms after the loss). */
const REATTACH_AFTER_MS = [1_000, 5_000];

/**
 * The local emulator ("Start Local Emulator": the bundled emulator on loopback), shared by the windows of this
 * machine's user. It runs `dist/cli.js emulator --port <port> --host 127.0.0.1 --data-dir <dir> --retention-ms <ms>
 * [--node-delay-ms <ms>] --owner-grace-ms <ms>` with the extension host's own Node (`process.execPath`,
 * `ELECTRON_RUN_AS_NODE=1` for desktop VS Code's Electron), in a process group of its own, and reads the base URL from
 * the child's first stdout line. One emulator at most: starting again stops the running one, whichever window started
 * it.
 *
 * It outlives the window that started it: a window reload (the extension host restarts) must not fail the jobs running
 * on it. Each window holds it (the emulator's owner operation, emulatorOwner.ts) and disposing only lets go; the
 * emulator stops {@link OWNER_GRACE_MS} after the last window let go (the last window closed). The record file
 * ({@link EmulatorProcessOptions.recordFile}) tells the next window where it runs, and {@link attach} holds it there.
 * Without a record file, disposing stops the child.
 *
 * A restart is the same emulator again, so the connection "Local emulator" and the jobs remembered for it stay
 * right: its data folder keeps its jobs and outputs, and it asks for the port of the last one that started
 * ({@link EmulatorProcessOptions.ports}); when another program holds that port, it takes a free one (port 0) and
 * remembers that.
 */
export class EmulatorProcess extends Disposable {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  /** The emulator this window holds (started here, or by another window) and this window's hold on it. */
  private held: { record: EmulatorRecord; hold: OwnerHold } | undefined;
  private startedWith: readonly string[] = [];
  private readonly listeners = new Set<() => void>();
  /** Starts, stops and attaches run one at a time. */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly timers = new Set<NodeJS.Timeout>();
  private released = false;

  constructor(private readonly options: EmulatorProcessOptions) {
    super();
    // Deactivation (a reload, the window closed): this window lets go of the emulator; without a record file (no other
    // window could find it) the child is stopped. The signal is sent at once; the exit is not waited for.
    this.register({
      dispose: () => {
        this.released = true;
        for (const timer of this.timers) clearTimeout(timer);
        if (this.options.recordFile === undefined) void this.stop();
        else this.letGo();
      },
    });
  }

  /**
   * Calls `listener` after an emulator started or was found running (its base URL is known) and after one stopped or
   * died (the status bar then re-checks whether the "Local emulator" connection is stale). Dispose the result to stop.
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

  /** The running emulator's pid (this window's child or the one it holds), or undefined. */
  get pid(): number | undefined {
    return this.child?.pid ?? this.held?.record.pid;
  }

  /** The running emulator's base URL, or undefined when this window neither started nor holds one. */
  get baseUrl(): string | undefined {
    return this.held?.record.baseUrl;
  }

  /** Where the running emulator is recorded for the other windows, or undefined (it stops with this window). */
  get recordFile(): string | undefined {
    return this.options.recordFile;
  }

  /** The arguments of the last child started (after the Node executable), or none. */
  get args(): readonly string[] {
    return this.startedWith;
  }

  private serial<T>(operation: () => Promise<T>): Promise<T> {
    const next = this.queue.then(operation, operation);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Holds the emulator the record file names (started by an earlier window, or by another window now): resolves true
   * when this window holds one, false when none runs (a record left by one that stopped is removed). Never throws.
   */
  attach(): Promise<boolean> {
    return this.serial(async () => {
      if (this.held !== undefined) return true;
      const file = this.options.recordFile;
      const record = file === undefined ? undefined : await readRecord(file);
      if (!record || this.released) return false;
      let hold: OwnerHold;
      try {
        hold = await holdEmulator(record.baseUrl, record.token, this.options.holdTimeoutMs ?? HOLD_TIMEOUT_MS);
      } catch (err) {
        this.options.log.info('emulator', `the emulator recorded at ${record.baseUrl} is gone (${String(err)})`);
        await removeRecord(file!, record.token).catch(() => undefined);
        return false;
      }
      if (this.released) {
        hold.release();
        return false;
      }
      this.holdOn(record, hold);
      this.options.log.info('emulator', `running at ${record.baseUrl} (pid ${hold.pid}), started by an earlier window`);
      this.fire();
      return true;
    });
  }

  /**
   * Stops the running emulator (this window's or another's), starts a new one and resolves its base URL (a loopback
   * http URL).
   * @throws Error when the child cannot start, exits first, prints something that is not a loopback URL, does not let
   *   itself be held, or says nothing within `startTimeoutMs` (the child is then stopped); the message carries the
   *   end of its stderr.
   */
  start(): Promise<string> {
    return this.serial(async () => {
      await this.stopNow();
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
    });
  }

  /** Starts one child on `port` (0: a free one); see {@link start}. @throws PortInUseError when the port is taken. */
  private async launch(port: number): Promise<string> {
    const args = [this.options.cliPath, 'emulator', '--port', String(port), '--host', '127.0.0.1'];
    if (this.options.dataDir !== undefined) args.push('--data-dir', this.options.dataDir);
    if (this.options.retentionMs !== undefined) args.push('--retention-ms', String(this.options.retentionMs));
    const delay = this.options.nodeDelayMs?.() ?? 0;
    if (delay > 0) args.push('--node-delay-ms', String(delay));
    args.push('--owner-grace-ms', String(this.options.ownerGraceMs ?? OWNER_GRACE_MS));
    this.startedWith = args;
    const token = randomBytes(32).toString('hex');
    const child = spawn(process.execPath, args, {
      // The token in the environment, not the arguments: the process list shows arguments to every user.
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1', [EMULATOR_OWNER_TOKEN_ENV]: token },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: the extension host's end (a reload) does not take it along.
      detached: true,
      windowsHide: true,
    });
    this.child = child;
    this.exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('close', () => resolve());
    });
    child.once('close', () => {
      if (this.child !== child) return;
      this.child = undefined;
      // A child that died on its own: whoever shows its connection hears it.
      const held = this.held;
      if (held && held.record.pid === child.pid) this.lost(held.hold);
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
      const hold = await holdEmulator(surface.baseUrl, token, this.options.holdTimeoutMs ?? HOLD_TIMEOUT_MS).catch(
        (err: unknown) => {
          throw new Error(`the emulator at ${surface.baseUrl} did not let itself be held: ${String(err)}`);
        },
      );
      const record = { pid: child.pid!, baseUrl: surface.baseUrl, token };
      this.holdOn(record, hold);
      if (this.options.recordFile !== undefined) await writeRecord(this.options.recordFile, record);
      this.options.log.info('emulator', `started (pid ${child.pid}) at ${surface.baseUrl}`);
      this.fire();
      return surface.baseUrl;
    } catch (err) {
      await this.stopNow();
      // The CLI says "port N on H is in use" (bad usage, exit 2) when the port is taken.
      if (port !== 0 && child.exitCode === 2 && /\bis in use\b/.test(stderr))
        throw new PortInUseError(`port ${port} is in use`);
      throw err;
    }
  }

  /** Keeps `hold` on the emulator of `record`: it is the running one now. */
  private holdOn(record: EmulatorRecord, hold: OwnerHold): void {
    this.held = { record, hold };
    void hold.ended.then(() => this.lost(hold));
  }

  /**
   * The hold ended without this window letting go: the emulator stopped (another window restarted it, or it died).
   * Heard at once; then this window looks for a running one again, a little later (a restart takes a moment).
   */
  private lost(hold: OwnerHold): void {
    if (this.held?.hold !== hold) return;
    this.held = undefined;
    this.fire();
    if (this.options.recordFile === undefined || this.released) return;
    for (const ms of REATTACH_AFTER_MS) {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        void this.attach();
      }, ms);
      timer.unref();
      this.timers.add(timer);
    }
  }

  /** Lets go of the emulator without stopping it (this window closes or reloads). */
  private letGo(): void {
    const held = this.held;
    this.held = undefined;
    // The child's pipes stay open until this process ends; the child does not wait for them.
    this.child?.unref();
    held?.hold.release();
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

  /**
   * Stops the running emulator and resolves once it has exited: this window's child (SIGTERM, then SIGKILL after
   * `stopTimeoutMs`), else the one this window holds or the record file names (asked through its owner operation, then
   * waited for, SIGKILL after `stopTimeoutMs`). Idempotent; never throws.
   */
  stop(): Promise<void> {
    return this.serial(() => this.stopNow());
  }

  private async stopNow(): Promise<void> {
    const child = this.child;
    const held = this.held;
    const file = this.options.recordFile;
    const record = held?.record ?? (child === undefined && file !== undefined ? await readRecord(file) : undefined);
    this.child = undefined;
    this.held = undefined;
    const stopMs = this.options.stopTimeoutMs ?? 5_000;
    let stopped: number | undefined;
    if (child) {
      const exited = this.exited;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), stopMs);
      await exited;
      clearTimeout(timer);
      stopped = child.pid;
    } else if (record && (await askToStop(record.baseUrl, record.token, stopMs))) {
      await this.untilGone(record.pid, stopMs);
      stopped = record.pid;
    }
    held?.hold.release();
    if (file !== undefined && record) await removeRecord(file, record.token).catch(() => undefined);
    if (stopped === undefined && !held) return;
    this.options.log.info('emulator', `stopped (pid ${stopped ?? record?.pid})`);
    this.fire();
  }

  /** Waits until the process `pid` has exited (it was asked to stop), SIGKILL after `ms`. */
  private async untilGone(pid: number, ms: number): Promise<void> {
    const sleep = this.options.sleep ?? ((wait: number) => new Promise<void>((r) => setTimeout(r, wait)));
    for (let waited = 0; isProcessAlive(pid); waited += 50) {
      if (waited >= ms) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
        return;
      }
      await sleep(50);
    }
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
