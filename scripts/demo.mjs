// `npm run demo`: the main job end to end on the embedded emulator. Starts `comfy-cloud emulator --port 0`,
// submits media/samples/invert.json with the CLI (live progress on stderr), downloads the output PNG into
// ./demo-output/, checks that it really is the inverted image, stops the emulator and exits with the CLI's code.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'dist', 'cli.js');
const require = createRequire(import.meta.url);
const { PNG } = require('pngjs');
const t0 = Date.now();

const emulator = spawn(process.execPath, [cli, 'emulator', '--port', '0', '--node-delay-ms', '250'], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const stopEmulator = () => {
  if (emulator.exitCode === null) emulator.kill('SIGTERM');
};
process.on('exit', stopEmulator);

const baseUrl = await new Promise((resolve, reject) => {
  const lines = createInterface({ input: emulator.stdout });
  lines.once('line', (line) => resolve(line.trim()));
  emulator.once('exit', (code) => reject(new Error(`the emulator exited (code ${code}) before printing its URL`)));
});
console.error(`demo: emulator at ${baseUrl}`);

const outDir = path.join(root, 'demo-output');
const submit = spawn(
  process.execPath,
  [cli, '--base-url', baseUrl, 'submit', path.join(root, 'media/samples/invert.json'), '--wait', '--out', outDir],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
let stdout = '';
submit.stdout.on('data', (d) => {
  stdout += d;
  process.stdout.write(d);
});
const code = await new Promise((resolve) => submit.once('exit', (c) => resolve(c ?? 1)));
stopEmulator();
await new Promise((resolve) => (emulator.exitCode !== null ? resolve() : emulator.once('exit', resolve)));

if (code !== 0) {
  console.error(`demo: the CLI exited with ${code}`);
  process.exit(code);
}
const file = stdout.trim().split('\n').filter(Boolean).pop();
const png = PNG.sync.read(fs.readFileSync(file));
let cyan = 0;
for (let i = 0; i < png.data.length; i += 4)
  if (png.data[i] === 0 && png.data[i + 1] === 255 && png.data[i + 2] === 255) cyan++;
const all = png.width * png.height;
console.error(
  `demo: ${path.relative(process.cwd(), file)} is ${png.width}×${png.height}, ${cyan}/${all} pixels #00FFFF (red inverted) — ${((Date.now() - t0) / 1000).toFixed(1)} s`,
);
process.exit(cyan === all && png.width === 64 && png.height === 64 ? 0 : 1);
