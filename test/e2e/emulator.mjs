// The job-service emulator for the UI suite: `node dist/cli.js emulator --port 0 --control` in a child process, behind
// a small recording proxy so the test can tell which requests the extension sent (e.g. none for a refused file). Its
// control endpoint holds nodes (src/emulator/holds.ts): a step that looks at a running job holds it at a node, looks,
// then releases it, so no step races a job however fast or slow the machine is.
/* global fetch -- Node's */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { ROOT } from './launch.mjs';

/**
 * Starts the emulator CLI and a recording proxy in front of it.
 * @returns {Promise<{baseUrl: string, routerUrl: string, emulatorUrl: string, requests: {method: string, url: string, status?: number}[], setAway(away: boolean): void,
 *   holdNodes(plan?: {classTypes?: string[], nodeIds?: string[]}): Promise<void>, heldAt(jobId: string | undefined, index: number): Promise<HeldNode>,
 *   releaseNodes(jobId?: string): Promise<HeldNode[]>, clearHolds(): Promise<void>, close(): Promise<void>}>}
 *   HeldNode: {jobId, nodeId, classType, index, total, since}; see the functions below.
 */
export async function startRecordedEmulator({ nodeDelayMs = 0 } = {}) {
  const cli = path.join(ROOT, 'dist/cli.js');
  if (!fs.existsSync(cli)) throw new Error(`${cli} is missing: build it with node esbuild.mjs`);
  /** Starts one emulator child; resolves with it, its kill and its two URLs (a restart starts another). */
  const spawnOne = async () => {
    // A mount prefix makes the emulator's links host-relative (as a serverless deployment's are), so the client
    // resolves them against the proxy's origin and every request it follows (cancel, events) is recorded too.
    const child = spawn(
      process.execPath,
      [
        cli,
        'emulator',
        '--port',
        '0',
        '--node-delay-ms',
        String(nodeDelayMs),
        '--mount-prefix',
        '/deployment/ui-test',
        '--control',
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const killChild = () => child.exitCode === null && child.signalCode === null && child.kill('SIGTERM');
    process.on('exit', killChild);
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    // Its first line is the job service's base URL, its second the model router's (`<origin>/router`).
    const [emulatorUrl, emulatorRouterUrl] = await new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the emulator printed no URLs within 15 s; stderr: ${stderr}`)),
        15000,
      );
      const lines = createInterface({ input: child.stdout });
      const seen = [];
      lines.on('line', (line) => {
        seen.push(line.trim());
        if (seen.length < 2) return;
        clearTimeout(timer);
        lines.close();
        resolve(seen);
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`the emulator exited (${code ?? signal}) before printing its URL; stderr: ${stderr}`));
      });
    });
    if (!/^https?:\/\//.test(emulatorUrl)) {
      killChild();
      throw new Error(`the emulator's first line is not a URL: ${JSON.stringify(emulatorUrl)}`);
    }
    return { child, killChild, emulatorUrl, emulatorRouterUrl };
  };
  let { child, killChild, emulatorUrl, emulatorRouterUrl } = await spawnOne();
  let target = new URL(emulatorUrl);

  // Recording proxy: forwards every request as is (streaming both ways, so server-sent events pass through). While
  // `away`, it answers nothing: every connection is reset, as a server that went away (the emulator behind it, and
  // its jobs, go on).
  const requests = [];
  const sockets = new Set();
  let away = false;
  const proxy = http.createServer((req, res) => {
    if (away) {
      req.socket.destroy();
      return;
    }
    const entry = { method: req.method, url: req.url };
    requests.push(entry);
    const upstream = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        entry.status = up.statusCode;
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', (e) => {
      entry.status = 502;
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`proxy: ${e.message}`);
    });
    req.pipe(upstream);
  });
  proxy.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  // The emulator's base URL may carry a path (a mount prefix): keep it.
  const baseUrl = `http://127.0.0.1:${proxy.address().port}${target.pathname.replace(/\/$/, '')}`;
  const routerUrl = `http://127.0.0.1:${proxy.address().port}${new URL(emulatorRouterUrl).pathname.replace(/\/$/, '')}`;

  /** A call to the emulator's control endpoint (at its origin root, straight to it: not recorded). */
  const control = async (path, method = 'GET', body) => {
    const res = await fetch(`${target.origin}/__emulator/${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    const answer = await res.json();
    if (!res.ok) throw new Error(`${method} /__emulator/${path} answered ${res.status}: ${JSON.stringify(answer)}`);
    return answer;
  };
  return {
    baseUrl,
    routerUrl,
    /** The emulator's own origin, not the proxy's (a WebSocket does not pass the proxy); a restart changes it. */
    get emulatorUrl() {
      return emulatorUrl;
    },
    requests,
    /**
     * The server away (true: every open connection is cut, every new one reset at once, no answer at all) or back
     * (false). The emulator behind the proxy goes on: its jobs run, and are there when it is back.
     */
    setAway: (value) => {
      away = value;
      if (value) for (const socket of sockets) socket.destroy();
    },
    /** From now on every node the plan names (every node for `{}`) stands still at its start until released. */
    holdNodes: async (plan = {}) => void (await control('holds', 'POST', plan)),
    /**
     * Resolves with the node held at execution position `index` (0-based; any when undefined) of job `jobId` (of any
     * job when undefined), polling the control endpoint; fails after `deadlineMs`. Held means: the job's progress names that node, and it
     * stays there until released.
     */
    heldAt: async (jobId, index, deadlineMs = 60000) => {
      const deadline = Date.now() + deadlineMs;
      for (;;) {
        const { held } = await control('holds');
        const node = held.find(
          (n) => (jobId === undefined || n.jobId === jobId) && (index === undefined || n.index === index),
        );
        if (node) return node;
        if (Date.now() > deadline)
          throw new Error(
            `no node held at position ${index} of job ${jobId ?? '(any)'} within ${deadlineMs / 1000} s; held: ${JSON.stringify(held)}`,
          );
        await new Promise((resolve) => setTimeout(resolve, 100)); // the poll's interval
      }
    },
    /** Lets the held node of `jobId` (every held node when undefined) run; the next node the plan names holds. */
    releaseNodes: async (jobId) =>
      (await control('holds/release', 'POST', jobId === undefined ? {} : { jobId })).released,
    /** No more holds: every held node runs on. */
    clearHolds: async () => void (await control('holds', 'DELETE')),
    /**
     * Stops the emulator and starts a new one behind the same proxy (the client's base URL does not change): a server
     * restarted without the jobs of the one before (each emulator starts with a fresh data folder).
     */
    restart: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      killChild();
      await exited;
      ({ child, killChild, emulatorUrl, emulatorRouterUrl } = await spawnOne());
      target = new URL(emulatorUrl);
    },
    close: async () => {
      proxy.closeAllConnections?.();
      await new Promise((resolve) => proxy.close(() => resolve()));
      // Wait for the emulator to stop: on SIGTERM it closes and removes its temporary data folder (and it must
      // not lose its stdout pipe before it has said so).
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        killChild();
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}
