/** Entry point of the `comfy-cloud` command (dist/cli.js): wires process streams, Ctrl-C and the emulator. */
import { startEmulator } from '../emulator';
import { runCli } from './cli';

const controller = new AbortController();
let interrupts = 0;
const onSignal = (): void => {
  // First Ctrl-C stops the wait (and cancels with --cancel-on-interrupt); a second one exits at once.
  if (++interrupts > 1) process.exit(130);
  controller.abort();
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  signal: controller.signal,
  startEmulator: (o) =>
    startEmulator({
      host: o.host,
      port: o.port,
      tokens: o.tokens,
      mountPrefix: o.mountPrefix,
      deploymentDomain: o.deploymentDomain,
      nodeDelayMs: o.nodeDelayMs,
      concurrency: o.concurrency,
      dataDir: o.dataDir,
      retentionMs: o.retentionMs,
      signedUrls: o.signedUrls,
      faults: o.faults.length ? { rules: o.faults } : undefined,
      control: o.control,
      router: o.router,
      v1: o.v1,
      owner: o.owner,
      log: process.env.COMFY_EMULATOR_LOG ? (l) => process.stderr.write(l + '\n') : undefined,
    }),
}).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`unexpected failure: ${e instanceof Error ? e.stack : String(e)}\n`);
    process.exitCode = 1;
  },
);
