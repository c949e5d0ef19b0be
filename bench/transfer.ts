/**
 * Moving bytes against the emulator (a child process, streaming blobs from disk), each run side by side with curl
 * on the same URL and size, each in a fresh process under GNU time (wall time and peak RSS):
 * - download: `comfy-cloud download <asset> <file>` vs `curl -o`;
 * - upload: `comfy-cloud upload <file>` (BLAKE3 in a worker, HEAD by-hash, streamed multipart) vs `curl -F`.
 * Each upload gets bytes of its own (a dedup hit would send nothing), and a state dir of its own, so its hash cache
 * is empty: a fresh upload. A second upload of the same unchanged file (`upload … again`) shows the hash cache: no
 * hashing, and a dedup hit that sends no bytes.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI, bigFile, mib, requireCommand, row, runMeasured, startEmulatorProcess } from './util';

export async function benchTransfer(dir: string, sizes: number[]): Promise<void> {
  requireCommand('curl', 'curl');
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run node esbuild.mjs first`);
  const dataDir = path.join(dir, 'emulator-data');
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.mkdirSync(dataDir, { recursive: true });
  const emu = await startEmulatorProcess(['--data-dir', dataDir]);
  try {
    for (const bytes of sizes) {
      const fileA = bigFile(path.join(dir, 'a'), bytes);
      const fileB = bigFile(path.join(dir, 'b'), bytes);
      // Upload: ours takes file A, curl file B (different bytes, same size).
      const state = fs.mkdtempSync(path.join(dir, 'state-'));
      const env = { ...process.env, COMFY_CLOUD_STATE_DIR: state };
      const ours = runMeasured(process.execPath, [CLI, '--base-url', emu.baseUrl, 'upload', fileA, '--json'], env);
      const oursAsset = JSON.parse(ours.stdout) as { id: string };
      const curl = runMeasured('curl', [
        '-sS',
        '-f',
        '-F',
        'content_type=application/octet-stream',
        '-F',
        `file_path=${path.basename(fileB)}`,
        '-F',
        `file=@${fileB}`,
        `${emu.baseUrl}/api/v2/assets`,
      ]);
      const curlAsset = JSON.parse(curl.stdout) as { id: string };
      row(`upload ${mib(bytes)}`, {
        ours_ms: ours.ms,
        curl_ms: curl.ms,
        ratio: ours.ms / curl.ms,
        ours_cpu_ms: ours.cpuMs,
        curl_cpu_ms: curl.cpuMs,
        ours_rss_MiB: ours.maxRssKiB / 1024,
        curl_rss_MiB: curl.maxRssKiB / 1024,
      });
      const again = runMeasured(process.execPath, [CLI, '--base-url', emu.baseUrl, 'upload', fileA, '--json'], env);
      row(`upload ${mib(bytes)} again`, {
        ours_ms: again.ms,
        curl_ms: curl.ms,
        ratio: again.ms / curl.ms,
        ours_rss_MiB: again.maxRssKiB / 1024,
      });
      fs.rmSync(state, { recursive: true, force: true });

      // Download the same asset both ways.
      const outOurs = path.join(dir, `dl-ours-${bytes}.bin`);
      const outCurl = path.join(dir, `dl-curl-${bytes}.bin`);
      fs.rmSync(outOurs, { force: true });
      fs.rmSync(outCurl, { force: true });
      const dOurs = runMeasured(process.execPath, [CLI, '--base-url', emu.baseUrl, 'download', oursAsset.id, outOurs]);
      const dCurl = runMeasured('curl', [
        '-sS',
        '-f',
        '-o',
        outCurl,
        `${emu.baseUrl}/api/v2/assets/${curlAsset.id}/content`,
      ]);
      if (fs.statSync(outOurs).size !== bytes || fs.statSync(outCurl).size !== bytes)
        throw new Error('a download is short');
      row(`download ${mib(bytes)}`, {
        ours_ms: dOurs.ms,
        curl_ms: dCurl.ms,
        ratio: dOurs.ms / dCurl.ms,
        ours_cpu_ms: dOurs.cpuMs,
        curl_cpu_ms: dCurl.cpuMs,
        ours_rss_MiB: dOurs.maxRssKiB / 1024,
        curl_rss_MiB: dCurl.maxRssKiB / 1024,
      });
      fs.rmSync(outOurs, { force: true });
      fs.rmSync(outCurl, { force: true });
    }
  } finally {
    await emu.stop();
  }
}
