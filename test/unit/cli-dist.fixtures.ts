/**
 * Shared by the cli-dist-*.test.ts suites (the shipped CLI, `node dist/cli.js …` in a child process): the path of the
 * bundle, the API key of its emulators, a clean child environment, `dist/cli.js emulator` started as a child, and
 * `useShippedCli`, which gives a suite its own two shipped emulators, a folder and a state folder, and runs the CLI
 * against them, recording every command run in `ran` (which cli-dist-emulator.test.ts checks is every command).
 */
import * as assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { TEST_ROUTER_KEY } from '../../src/emulator';
import { type CliRun, type Json } from './harness';
import { repositoryRoot } from './repositoryRoot';
import { tempDir } from './tmp';

export const CLI = path.join(repositoryRoot(), 'dist', 'cli.js');
/** The API key the emulator of these tests requires (its `--token`). */
export const KEY = 'dist-cli-key';

/** The end of a child's stderr: a crash of a minified bundle prints its whole first line before the error. */
export function tail(text: string): string {
  return text.length > 2000 ? `…${text.slice(-2000)}` : text;
}

/** The environment of every run: no COMFY_* variable of the person running the tests, plus `env`. */
export function childEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('COMFY_')));
  return { ...clean, ...env };
}

/** A running `node dist/cli.js emulator …`: its two result lines (base URL, router URL) and the child. */
export interface ShippedEmulator {
  baseUrl: string;
  routerUrl: string;
  child: ChildProcess;
  /** stderr so far. */
  stderr(): string;
  /** Resolves with the exit code once the child has exited. */
  exited: Promise<number | null>;
}

/**
 * Starts `node dist/cli.js emulator --port 0 <args>` (`env` added to its environment) and resolves once it printed its
 * base URL and router URL.
 */
export function startShippedEmulator(args: string[], env: NodeJS.ProcessEnv = {}): Promise<ShippedEmulator> {
  const child = spawn(process.execPath, [CLI, 'emulator', '--port', '0', ...args], {
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  process.once('exit', () => child.kill());
  let stdout = '';
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      const lines = stdout.split('\n');
      if (lines.length > 2) resolve({ baseUrl: lines[0]!, routerUrl: lines[1]!, child, stderr: () => stderr, exited });
    });
    void exited.then((code) =>
      reject(new Error(`dist/cli.js emulator exited (${code}) before printing its URLs: ${tail(stderr)}`)),
    );
  });
}

/** The commands run so far by every suite of this process: `submit`, `models run`, `v1 submit`, … */
export const ran = new Set<string>();

/** The commands a `--help` lists (the lines under "Commands:"), without `help`. */
export function listed(help: string): string[] {
  const section = help.split(/^Commands:$/m)[1] ?? '';
  return [...section.matchAll(/^ {2}(\S+)/gm)].map((m) => m[1]!).filter((c) => c !== 'help');
}

/** What `useShippedCli` gives a suite: its emulators and folders (set once its `before` ran), and the CLI over them. */
export interface ShippedCli {
  emu: ShippedEmulator;
  /** An emulator whose every node takes a minute: its jobs stay queued or running until canceled. */
  slow: ShippedEmulator;
  dir: string;
  stateDir: string;
  /**
   * Runs `node dist/cli.js <args>` with the emulator, the key, the router and this suite's state folder in the
   * environment (`v1`: COMFY_API=v1) and records the command it ran.
   */
  cli(args: string[], options?: { env?: NodeJS.ProcessEnv; v1?: boolean; cwd?: string }): Promise<CliRun>;
  /** `cli`, insisting on exit 0. */
  ok(args: string[], options?: { env?: NodeJS.ProcessEnv; v1?: boolean }): Promise<CliRun>;
  /** Writes `content` (JSON unless a string or bytes) to `name` in the suite's folder; returns its path. */
  write(name: string, content: string | Buffer | Json): string;
  /** GET of the emulator's model router with its key: the JSON as served. */
  served(pathAndQuery: string): Promise<Json>;
}

/**
 * Registers, in the calling suite, a `before` that starts its two shipped emulators (`--token KEY`, and one with
 * `--node-delay-ms 60000`) and makes its folders, and an `after` that stops them.
 */
export function useShippedCli(): ShippedCli {
  const suite = {} as ShippedCli;
  before(async () => {
    assert.ok(fs.existsSync(CLI), `${CLI} is missing: build it first (node esbuild.mjs --production)`);
    suite.dir = tempDir('cc-dist-cli-');
    suite.stateDir = tempDir('cc-dist-state-');
    [suite.emu, suite.slow] = await Promise.all([
      startShippedEmulator(['--token', KEY]),
      startShippedEmulator(['--token', KEY, '--node-delay-ms', '60000']),
    ]);
  });
  after(() => {
    for (const e of [suite.emu, suite.slow]) e?.child.kill();
  });

  suite.cli = (args, options = {}) => {
    const command = args[0] === 'models' ? `models ${args[1]}` : args[0]!;
    ran.add(options.v1 ? `v1 ${command}` : command);
    const env = childEnv({
      COMFY_BASE_URL: suite.emu.baseUrl,
      COMFY_API_KEY: KEY,
      COMFY_ROUTER_URL: suite.emu.routerUrl,
      COMFY_ROUTER_KEY: TEST_ROUTER_KEY,
      COMFY_CLOUD_STATE_DIR: suite.stateDir,
      ...(options.v1 ? { COMFY_API: 'v1' } : {}),
      ...options.env,
    });
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [CLI, ...args],
        { env, cwd: options.cwd ?? suite.dir, maxBuffer: 64 * 1024 * 1024 },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
    });
  };

  suite.ok = async (args, options = {}) => {
    const r = await suite.cli(args, options);
    assert.equal(r.code, 0, `${args.join(' ')}: exit ${r.code}\n${tail(r.stderr)}`);
    return r;
  };

  suite.write = (name, content) => {
    const file = path.join(suite.dir, name);
    fs.writeFileSync(file, typeof content === 'string' || Buffer.isBuffer(content) ? content : JSON.stringify(content));
    return file;
  };

  suite.served = async (pathAndQuery) => {
    const res = await fetch(`${suite.emu.routerUrl}${pathAndQuery}`, {
      headers: { authorization: `Bearer ${TEST_ROUTER_KEY}` },
    });
    assert.equal(res.status, 200, pathAndQuery);
    return (await res.json()) as Json;
  };
  return suite;
}
