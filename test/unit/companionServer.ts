/**
 * A loopback server that replays the self-hosted companion's answers to the Job and Asset API v2 (as observed from its
 * own code on its demo engine): `started_at` and `completed_at` stay null even for a finished job, `queue_position` is
 * null while queued, progress carries `nodes_total: 0` and a node with no class, previews carry `node_id: ""`, an
 * output's `id` is an opaque token with `hash: null` and `size_bytes: 0` (not computed), every URL is absolute from
 * the request's Host header, a finished job's event stream sends its `output` frames after the terminal `status`, and
 * an unknown route answers a plain-text 404. Jobs move only when the test says ({@link Companion.run},
 * {@link Companion.finish}), or on their own with `autoRun`. Used by the unit tests and the extension-host suite.
 */
import * as http from 'node:http';
import { randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { PNG } from 'pngjs';

/** One job as the companion keeps it. */
export interface CompanionJob {
  id: string;
  status: 'queued' | 'running' | 'succeeded';
  createdAt: string;
  /** The opaque token that names the output (once succeeded). */
  outputToken: string;
  /** The event streams open on this job. */
  streams: Set<http.ServerResponse>;
}

/** The server and its controls. */
export interface Companion {
  /** `http://127.0.0.1:<port>`: the base URL of a connection to it. */
  origin: string;
  /** Every request: method and path. */
  seen: { method: string; path: string }[];
  jobs: Map<string, CompanionJob>;
  /** The bytes of every output: a 64×64 cyan PNG (the companion says `size_bytes: 0` for it). */
  png: Buffer;
  /** Job `id` (default the latest) starts running: status, then a progress without node counts and a preview. */
  run(id?: string): void;
  /** Job `id` (default the latest) succeeds with one output; its streams get the status, then the output, then end. */
  finish(id?: string): void;
  close(): Promise<void>;
}

/** A 64×64 cyan PNG, as the companion's demo engine saves for the weight-free sample. */
function cyanPng(): Buffer {
  const png = new PNG({ width: 64, height: 64 });
  for (let i = 0; i < png.data.length; i += 4) png.data.set([0, 255, 255, 255], i);
  return PNG.sync.write(png, { colorType: 2 });
}

/**
 * Starts the replay server. `autoRun`: a submitted job runs at once and succeeds on the next tick after its first
 * event stream or GET saw it running (for a suite that only wants the companion's answers, not to pace the job).
 */
export async function startCompanion(options: { autoRun?: boolean } = {}): Promise<Companion> {
  const jobs = new Map<string, CompanionJob>();
  const seen: Companion['seen'] = [];
  const png = cyanPng();
  let latest: string | undefined;

  const wire = (job: CompanionJob, host: string): Record<string, unknown> => {
    const base = `http://${host}`;
    return {
      id: job.id,
      status: job.status,
      created_at: job.createdAt,
      // The companion leaves both null, even for a finished job.
      started_at: null,
      completed_at: null,
      expires_at: null,
      queue_position: null,
      progress: job.status === 'running' ? progress() : null,
      outputs: job.status === 'succeeded' ? [output(job, base)] : [],
      error: null,
      urls: {
        self: `${base}/api/v2/jobs/${job.id}`,
        events: `${base}/api/v2/jobs/${job.id}/events`,
        cancel: `${base}/api/v2/jobs/${job.id}/cancel`,
      },
    };
  };
  const progress = (): Record<string, unknown> => ({
    value: 0.5,
    nodes_done: 0,
    nodes_total: 0,
    current_node: '3',
    current_node_class: null,
    step: null,
    steps: null,
    message: null,
  });
  const output = (job: CompanionJob, base: string): Record<string, unknown> => ({
    id: job.outputToken,
    node_id: '3',
    name: `ComfyUI_${job.id.slice(0, 8)}_00001_.png`,
    type: 'image',
    content_type: 'image/png',
    size_bytes: 0,
    hash: null,
    url: `${base}/api/v2/assets/${job.outputToken}/content`,
    url_expires_at: null,
    job_id: job.id,
  });
  const frame = (res: http.ServerResponse, event: string, data: unknown): void =>
    void res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  const hostOf = (req: http.IncomingMessage): string => req.headers.host ?? '127.0.0.1';
  const pick = (id?: string): CompanionJob => {
    const job = jobs.get(id ?? latest ?? '');
    if (!job) throw new Error(`the companion has no job ${id ?? '(none submitted)'}`);
    return job;
  };

  const run = (id?: string): void => {
    const job = pick(id);
    if (job.status !== 'queued') return;
    job.status = 'running';
    for (const res of job.streams) {
      frame(res, 'status', { status: 'running', queue_position: null });
      frame(res, 'progress', progress());
      frame(res, 'preview', { node_id: '', content_type: 'image/png', data_base64: png.toString('base64') });
    }
  };
  const finish = (id?: string): void => {
    const job = pick(id);
    if (job.status === 'succeeded') return;
    job.status = 'succeeded';
    for (const res of job.streams) {
      const host = (res as http.ServerResponse & { host?: string }).host ?? '127.0.0.1';
      // The terminal status first, the output after it (as the companion sends them).
      frame(res, 'status', { status: 'succeeded', queue_position: null });
      frame(res, 'output', output(job, `http://${host}`));
      res.end();
    }
    job.streams.clear();
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    seen.push({ method: req.method ?? '', path: url.pathname });
    const json = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const parts = url.pathname.split('/').filter(Boolean);
    if (req.method === 'GET' && url.pathname === '/api/v2/health') return json(200, { status: 'ok' });
    if (req.method === 'POST' && url.pathname === '/api/v2/jobs') {
      req.resume();
      req.on('end', () => {
        const job: CompanionJob = {
          id: randomUUID(),
          status: 'queued',
          createdAt: new Date().toISOString(),
          outputToken: randomBytes(24).toString('base64url'),
          streams: new Set(),
        };
        jobs.set(job.id, job);
        latest = job.id;
        if (options.autoRun) run(job.id);
        json(201, wire(job, hostOf(req)));
      });
      return;
    }
    if (parts[0] === 'api' && parts[1] === 'v2' && parts[2] === 'jobs' && parts[3] && req.method === 'GET') {
      const job = jobs.get(parts[3]);
      if (!job) return json(404, { error: { code: 'not_found', message: `no job with id "${parts[3]}"` } });
      if (parts.length === 4) {
        json(200, wire(job, hostOf(req)));
        if (options.autoRun && job.status === 'running') setImmediate(() => finish(job.id));
        return;
      }
      if (parts[4] === 'events' && parts.length === 5) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        (res as http.ServerResponse & { host?: string }).host = hostOf(req);
        frame(res, 'status', { status: job.status, queue_position: null });
        if (job.status === 'running') {
          frame(res, 'progress', progress());
          frame(res, 'preview', { node_id: '', content_type: 'image/png', data_base64: png.toString('base64') });
        }
        if (job.status === 'succeeded') {
          frame(res, 'output', output(job, `http://${hostOf(req)}`));
          res.end();
          return;
        }
        job.streams.add(res);
        res.on('close', () => job.streams.delete(res));
        if (options.autoRun && job.status === 'running') setImmediate(() => finish(job.id));
        return;
      }
    }
    if (
      req.method === 'GET' &&
      parts[0] === 'api' &&
      parts[1] === 'v2' &&
      parts[2] === 'assets' &&
      parts[4] === 'content'
    ) {
      const job = [...jobs.values()].find((j) => j.outputToken === parts[3] && j.status === 'succeeded');
      if (job) {
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(png.length) });
        res.end(png);
        return;
      }
    }
    // Unknown routes: a plain-text 404, no envelope.
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('404: Not Found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    seen,
    jobs,
    png,
    run,
    finish,
    close: () =>
      new Promise<void>((resolve) => {
        for (const job of jobs.values()) for (const res of job.streams) res.end();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
