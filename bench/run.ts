/**
 * `npm run bench`: every benchmark, each against its reference in the same run. Sizes from BENCH_SIZES_MIB
 * (default "256,1024"); files under BENCH_DIR (default the OS temp folder).
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { benchActivation } from './activation';
import { benchBatch } from './batch';
import { benchConvert } from './convert';
import { benchEvents } from './events';
import { benchGraph } from './graph';
import { benchHash } from './hash';
import { benchTransfer } from './transfer';
import { benchTree } from './tree';
import { QUICK, scaled } from './util';

async function main(): Promise<void> {
  const dir = process.env.BENCH_DIR ?? path.join(os.tmpdir(), 'comfy-cloud-bench');
  const sizes = (process.env.BENCH_SIZES_MIB ?? '256,1024').split(',').map((s) => Number(s) * (1 << 20));
  const only = process.argv.slice(2).find((a) => !a.startsWith('--'));
  console.log(
    `node ${process.version}, ${os.cpus().length} cores, files in ${dir}${QUICK ? ' (quick: every benchmark once on tiny sizes; the figures mean nothing)' : ''}`,
  );
  if (!only || only === 'activation') await benchActivation(scaled(21, 1));
  if (!only || only === 'events') await benchEvents(scaled(200_000, 1000));
  if (!only || only === 'convert') benchConvert(scaled(21, 1));
  if (!only || only === 'tree') await benchTree(dir);
  if (!only || only === 'graph') await benchGraph();
  if (!only || only === 'hash') await benchHash(dir, Math.max(...sizes));
  if (!only || only === 'transfer') await benchTransfer(dir, sizes);
  if (!only || only === 'batch') await benchBatch(dir);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
