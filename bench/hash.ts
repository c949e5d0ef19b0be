/**
 * File hashing: our BLAKE3 (hash-wasm in a worker thread) against `b3sum --num-threads 1` on the same file, side
 * by side in one run, and the main thread's event-loop delay p99 while the worker hashes.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { hashFile } from '../src/core/util/hash';
import { bigFile, mib, peakRssMiB, requireCommand, row, runMeasured, timed } from './util';

export async function benchHash(dir: string, bytes: number): Promise<void> {
  requireCommand('b3sum', 'b3sum');
  const file = bigFile(dir, bytes);
  // Warm the page cache first, so neither side pays for the disk (the first measured run would otherwise).
  runMeasured('b3sum', ['--num-threads', '1', '--no-names', file]);
  const reference = runMeasured('b3sum', ['--num-threads', '1', '--no-names', file]);
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  const ours = await timed(() => hashFile(file));
  histogram.disable();
  const same = ours.value === `blake3:${reference.stdout.trim()}`;
  row(`hash ${mib(bytes)}`, {
    ours_ms: ours.ms,
    b3sum_ms: reference.ms,
    ratio: ours.ms / reference.ms,
    ours_MiB_s: bytes / (1 << 20) / (ours.ms / 1000),
    b3sum_MiB_s: bytes / (1 << 20) / (reference.ms / 1000),
    loop_delay_p99_ms: histogram.percentile(99) / 1e6,
    peak_rss_MiB: peakRssMiB(),
    b3sum_rss_MiB: reference.maxRssKiB / 1024,
    same_digest: same ? 'yes' : 'NO',
  });
  if (!same) throw new Error(`digests differ: ${ours.value} vs ${reference.stdout.trim()}`);
}
