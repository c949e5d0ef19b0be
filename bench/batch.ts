/**
 * A batch of 200 jobs from the command line against the emulator (a process of its own, 8 jobs running at once), in
 * client CPU time per job (user + system of the CLI processes, from GNU time): `comfy-cloud submit --set
 * 1.color=1..200 --concurrency 8 --out DIR` (one process follows the whole batch), beside the reference, the same 200
 * jobs each submitted by its own `comfy-cloud submit --wait --out DIR` (8 processes at a time, as a shell loop with
 * `xargs -P 8` would). Both download every output. Reported: CPU ms per job of each, their ratio, and wall times.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLI, requireCommand, row, scaled, startEmulatorProcess } from './util';

const JOBS = Number(process.env.BENCH_BATCH_JOBS ?? scaled(200, 4));
const CONCURRENCY = 8;

/** One child process measured by GNU time: wall (ms), CPU user + system (ms), peak RSS (KiB). */
interface Measured {
  wallMs: number;
  cpuMs: number;
  maxRssKiB: number;
}

/** Runs `node dist/cli.js <args>` under GNU time. @throws when it exits other than 0. */
function measuredCli(args: string[], env: NodeJS.ProcessEnv): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const t = process.hrtime.bigint();
    const child = spawn('/usr/bin/time', ['-f', '%U %S %M', process.execPath, CLI, ...args], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    // 'close', not 'exit': GNU time's line is on stderr, which may still be unread when the process has exited.
    child.once('close', (code) => {
      const wallMs = Number(process.hrtime.bigint() - t) / 1e6;
      if (code !== 0) return reject(new Error(`comfy-cloud ${args.join(' ')} exited ${code}: ${stderr.slice(-2000)}`));
      const [user, system, rss] = stderr.trim().split('\n').at(-1)!.split(' ').map(Number);
      if (![user, system, rss].every(Number.isFinite)) return reject(new Error(`GNU time said: ${stderr.slice(-500)}`));
      resolve({ wallMs, cpuMs: (user! + system!) * 1000, maxRssKiB: rss! });
    });
  });
}

/** Prints the batch's client CPU per job beside 200 single submissions', and their ratio. */
export async function benchBatch(dir: string): Promise<void> {
  requireCommand('/usr/bin/time', 'time');
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run node esbuild.mjs first`);
  const work = fs.mkdtempSync(path.join(fs.existsSync(dir) ? dir : os.tmpdir(), 'batch-'));
  const workflow = path.join(work, 'invert.json');
  fs.writeFileSync(
    workflow,
    JSON.stringify({
      '1': { class_type: 'EmptyImage', inputs: { width: 64, height: 64, batch_size: 1, color: 0 } },
      '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
      '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'bench' } },
    }),
  );
  const emu = await startEmulatorProcess(['--concurrency', String(CONCURRENCY)]);
  try {
    const env = (name: string): NodeJS.ProcessEnv => ({
      ...process.env,
      COMFY_BASE_URL: emu.baseUrl,
      COMFY_CLOUD_STATE_DIR: path.join(work, `state-${name}`),
    });
    const t = process.hrtime.bigint();
    const batch = await measuredCli(
      [
        '--quiet',
        'submit',
        workflow,
        '--set',
        `1.color=1..${JOBS}`,
        '--concurrency',
        String(CONCURRENCY),
        '--out',
        path.join(work, 'batch-out'),
      ],
      env('batch'),
    );
    const batchWallMs = Number(process.hrtime.bigint() - t) / 1e6;

    // The reference: one process per job, 8 at a time, each its own workflow file (its own color).
    const singles: Measured[] = [];
    let next = 1;
    const t2 = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next <= JOBS) {
          const color = next++;
          const file = path.join(work, `single-${color}.json`);
          fs.writeFileSync(file, fs.readFileSync(workflow, 'utf8').replace('"color":0', `"color":${color}`));
          singles.push(
            await measuredCli(
              ['--quiet', 'submit', file, '--wait', '--out', path.join(work, 'single-out', String(color))],
              env('single'),
            ),
          );
        }
      }),
    );
    const singlesWallMs = Number(process.hrtime.bigint() - t2) / 1e6;
    const singleCpu = singles.reduce((s, m) => s + m.cpuMs, 0);
    row(`batch of ${JOBS} jobs, concurrency ${CONCURRENCY}`, {
      batch_cpu_ms_per_job: batch.cpuMs / JOBS,
      singles_cpu_ms_per_job: singleCpu / JOBS,
      ratio: batch.cpuMs / singleCpu,
      batch_wall_s: batchWallMs / 1000,
      singles_wall_s: singlesWallMs / 1000,
      batch_rss_MiB: batch.maxRssKiB / 1024,
    });
  } finally {
    await emu.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
}
