/** Shared helpers of the benchmarks: timing, peak RSS of a child command, big test files, printing rows. */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';

/**
 * The quick mode (`BENCH_QUICK=1`, or `npm run bench -- --quick`): every benchmark once on tiny sizes, so CI proves each
 * still runs. Its figures mean nothing; nothing is ever judged on them.
 */
export const QUICK = process.env.BENCH_QUICK === '1' || process.argv.includes('--quick');

/** `full` normally, `quick` in the quick mode (a count of runs, items or frames). */
export function scaled(full: number, quick: number): number {
  return QUICK ? quick : full;
}

/** Wall time of `fn`, ms. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t = process.hrtime.bigint();
  const value = await fn();
  return { ms: Number(process.hrtime.bigint() - t) / 1e6, value };
}

/** Runs a command under GNU time: wall ms, peak RSS (KiB), CPU ms (user + system). @throws when it fails or GNU time is missing. */
export function runMeasured(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): { ms: number; maxRssKiB: number; cpuMs: number; stdout: string } {
  const t = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', ['-f', '%M %U %S', cmd, ...args], { encoding: 'utf8', maxBuffer: 1 << 26, env });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} failed (${r.status}): ${r.stderr}`);
  const lines = r.stderr.trim().split('\n');
  // Peak RSS (KiB), then user and system CPU seconds: the CPU time is what a busy machine moves least.
  const [rss, user, system] = lines[lines.length - 1]!.split(' ').map(Number);
  return { ms, maxRssKiB: rss!, cpuMs: (user! + system!) * 1000, stdout: r.stdout };
}

/** Makes (or reuses) a file of `bytes` pseudo-random bytes in `dir`. */
export function bigFile(dir: string, bytes: number): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `bench-${bytes}.bin`);
  if (fs.existsSync(file) && fs.statSync(file).size === bytes) return file;
  const fd = fs.openSync(file, 'w');
  const block = randomBytes(1 << 20);
  for (let written = 0; written < bytes; written += block.length) {
    // Vary each MiB so no block repeats (keeps compressors and dedup honest).
    block.writeUInt32LE(written >>> 0, 0);
    fs.writeSync(fd, block, 0, Math.min(block.length, bytes - written));
  }
  fs.closeSync(fd);
  return file;
}

/** This process's peak RSS so far, MiB. */
export function peakRssMiB(): number {
  return process.resourceUsage().maxRSS / 1024;
}

/** Requires a command, saying how to install it. */
export function requireCommand(name: string, debianPackage: string): void {
  const r = spawnSync('sh', ['-c', `command -v ${name}`]);
  if (r.status !== 0) throw new Error(`${name} is needed for this benchmark: apt-get install -y ${debianPackage}`);
}

export function mib(bytes: number): string {
  return `${(bytes / (1 << 20)).toFixed(0)} MiB`;
}

/** Prints a result row. */
export function row(name: string, fields: Record<string, string | number>): void {
  console.log(
    `${name.padEnd(34)} ${Object.entries(fields)
      .map(([k, v]) => `${k}=${typeof v === 'number' ? (Number.isInteger(v) ? v : v.toFixed(2)) : v}`)
      .join('  ')}`,
  );
}

/** The shipped CLI, `dist/cli.js` (the benchmarks measure what ships). */
export const CLI = path.join(path.resolve(__dirname, '..', '..'), 'dist', 'cli.js');

/**
 * Starts `comfy-cloud emulator --port 0 <args>` in its own process (the client measured is the only thing in the
 * bench's process); resolves with its base URL (the first line it prints) and a stop function (SIGTERM, then its exit).
 */
export async function startEmulatorProcess(args: string[] = []): Promise<{ baseUrl: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [CLI, 'emulator', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const baseUrl = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', (l) => resolve(l.trim()));
    child.once('exit', (code) => reject(new Error(`emulator exited ${code}`)));
  });
  return {
    baseUrl,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
