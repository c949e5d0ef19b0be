/**
 * What every command of the CLI shares, built once per run by {@link createContext} (cli.ts): the streams, the
 * {@link Output}, the Redactor, the client factory that reads the global options, the remembered-jobs store, the
 * progress view and the exit code. A command module receives it with the program it registers on, and never builds
 * its own client.
 */
import type { Command } from 'commander';
import { ComfyClient, HashCache, StateStore, defaultStateDir, deploymentBaseUrl, discoverCompanion, userAgent, type Redactor } from '../core';
import { Exit, UsageError, shown, type Output } from './output';
import { BarProgress, LineProgress, type ProgressView } from './progress';

/** Where the CLI reads and writes; `process` in the real command, buffers in tests. */
export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /** Aborts the running command (Ctrl-C). */
  signal?: AbortSignal;
  /** Starts the emulator for `comfy-cloud emulator` (injected so the core CLI stays small in tests). */
  startEmulator?: (options: EmulatorCliOptions) => Promise<{ baseUrl: string; close(): Promise<void> }>;
}

/** Options of `comfy-cloud emulator`. */
export interface EmulatorCliOptions {
  host: string;
  port: number;
  tokens: string[];
  mountPrefix?: string;
  nodeDelayMs: number;
  concurrency: number;
  dataDir?: string;
  signedUrls: boolean;
  /** Fault specs (`--fault`), read by the emulator's parseFaultSpec. */
  faults: string[];
  control: boolean;
}

/** The global options (cli.ts), as commander gives them: strings, read only once parsed. */
export interface GlobalOptions {
  baseUrl?: string;
  deployment?: string;
  apiKey?: string;
  /** ms, as typed; checked by {@link CliContext.client}. */
  timeout: string;
  json?: boolean;
  quiet?: boolean;
}

/** The shared context of one CLI run (see the module comment). */
export interface CliContext {
  readonly io: CliIo;
  readonly output: Output;
  /** Holds the user's API key (env and `--api-key`): nothing printed contains it. */
  readonly redactor: Redactor;
  /**
   * A client of the configured server (global options, then the environment).
   * @throws UsageError when `--timeout` is not a positive number of ms.
   */
  client(): Promise<ComfyClient>;
  /** Runs `fn` with a client of the configured server, closed afterwards (also when `fn` throws). */
  withClient(fn: (c: ComfyClient) => Promise<void>): Promise<void>;
  /** The remembered-jobs store shared with the extension ($COMFY_CLOUD_STATE_DIR, else the XDG state folder). */
  store(): StateStore;
  /** Progress on stderr: a bar on a terminal, lines otherwise, nothing with `--quiet`. */
  progressView(): ProgressView;
  /** Says on stderr that a request is retried and in how many seconds (an `onRetry`/`onWait` callback). */
  retryLine(r: { reason: string; delayMs: number }): void;
  /** Sets the exit code returned once the command ends normally (a thrown error decides its own). */
  setExitCode(code: number): void;
  /** The exit code set so far ({@link Exit.ok} unless a command set another). */
  readonly exitCode: number;
}

/**
 * Builds the context of one run of `program`. Global options are read lazily (they are known only once parsed).
 */
export function createContext(program: Command, io: CliIo, output: Output, redactor: Redactor): CliContext {
  let exitCode: number = Exit.ok;
  const globals = (): GlobalOptions => program.opts<GlobalOptions>();

  /**
   * The base URL: --base-url, else $COMFY_BASE_URL, else a running self-hosted companion found from its state file
   * (FACTS.md), else the companion's default address; with --deployment, that deployment under it.
   */
  const baseUrl = async (): Promise<string> => {
    const g = globals();
    const base = g.baseUrl || io.env.COMFY_BASE_URL || (await discoverCompanion(io.env))?.url || 'http://127.0.0.1:8189';
    const deployment = g.deployment || io.env.COMFY_DEPLOYMENT;
    return deployment ? deploymentBaseUrl(base, deployment) : base;
  };
  const client = async (): Promise<ComfyClient> => {
    const g = globals();
    const timeoutMs = Number(g.timeout);
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new UsageError(`--timeout must be a positive number of ms (got ${g.timeout})`);
    // The upload hash cache lives in the state dir, shared with the extension: an unchanged file is hashed once.
    return new ComfyClient({ baseUrl: await baseUrl(), apiKey: g.apiKey || io.env.COMFY_API_KEY || undefined, timeoutMs, userAgent: userAgent('cli'), hashCache: new HashCache(defaultStateDir(io.env)) });
  };

  return {
    io,
    output,
    redactor,
    client,
    async withClient(fn) {
      const c = await client();
      try {
        await fn(c);
      } finally {
        await c.close();
      }
    },
    store: () => new StateStore(defaultStateDir(io.env)),
    progressView: () =>
      globals().quiet ? { update: () => undefined, stop: () => undefined } : io.stderr.isTTY ? new BarProgress(io.stderr) : new LineProgress((line) => output.message(line)),
    retryLine: (r) => output.message(`${shown(r.reason)}: retrying in ${Math.ceil(r.delayMs / 1000)} s…`),
    setExitCode(code) {
      exitCode = code;
    },
    get exitCode() {
      return exitCode;
    },
  };
}
