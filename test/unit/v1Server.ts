/**
 * A small hostile v1 server for the v1 client's unit tests: a real `node:http` server on a random loopback port with a
 * `ws` WebSocketServer on `/ws` (no HTTP or WebSocket mocking library). Each test routes requests itself.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Seen } from './httpServer';

/** One WebSocket handshake the server saw. */
export interface SeenSocket {
  url: URL;
  headers: http.IncomingHttpHeaders;
}

export interface V1TestServer {
  origin: string;
  /** Every HTTP request (handshakes not included), in order. */
  seen: Seen[];
  /** Every WebSocket handshake, in order. */
  sockets: SeenSocket[];
  /** Events in the order the server saw them: `ws-open <clientId>`, `POST /api/prompt`, … */
  log: string[];
  /** The open server-side sockets. */
  clients(): WebSocket[];
  /** Sends `message` (JSON text, or bytes as a binary frame) to every open socket; resolves once written. */
  broadcast(message: unknown): Promise<void>;
  close(): Promise<void>;
}

/** What the server does with a handshake: accept (default) or answer an HTTP status. */
export type UpgradeDecision = { accept: true } | { status: number };

export interface V1ServerOptions {
  /** Decides each handshake (default: accept). */
  upgrade?: (url: URL) => UpgradeDecision;
  /** Called with each accepted socket. */
  onSocket?: (ws: WebSocket, url: URL) => void;
}

/** Reads a request body whole (test servers only). */
export function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Answers JSON. */
export function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Starts the server: `handler` answers HTTP requests; `/ws` upgrades per `options`. */
export async function startV1Server(
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => void,
  options: V1ServerOptions = {},
): Promise<V1TestServer> {
  const seen: Seen[] = [];
  const sockets: SeenSocket[] = [];
  const log: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    log.push(`${req.method} ${(req.url ?? '').split('?')[0]}`);
    handler(req, res);
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    sockets.push({ url, headers: req.headers });
    const decision = options.upgrade?.(url) ?? { accept: true };
    if (!('accept' in decision)) {
      socket.end(`HTTP/1.1 ${decision.status} Refused\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      log.push(`ws-open ${url.searchParams.get('clientId')}`);
      ws.on('error', () => undefined);
      options.onSocket?.(ws, url);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const clients = (): WebSocket[] => [...wss.clients].filter((c) => c.readyState === c.OPEN);
  return {
    origin: `http://127.0.0.1:${port}`,
    seen,
    sockets,
    log,
    clients,
    broadcast: (message) =>
      Promise.all(
        clients().map(
          (ws) =>
            new Promise<void>((resolve) => {
              const data = Buffer.isBuffer(message) ? message : JSON.stringify(message);
              ws.send(data, { binary: Buffer.isBuffer(message) }, () => resolve());
            }),
        ),
      ).then(() => undefined),
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of wss.clients) c.terminate();
        wss.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A PREVIEW_IMAGE frame: type 1, `image_type`, bytes (Cloud API v1 (deprecated), Events), written byte by byte here.
 */
export function previewFrame(imageType: number, image: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(1, 0);
  head.writeUInt32BE(imageType, 4);
  return Buffer.concat([head, image]);
}

/** A TEXT frame: type 3, `node_id_len`, node id, text. */
export function textFrame(nodeId: string, text: string): Buffer {
  const id = Buffer.from(nodeId, 'utf8');
  const head = Buffer.alloc(8);
  head.writeUInt32BE(3, 0);
  head.writeUInt32BE(id.length, 4);
  return Buffer.concat([head, id, Buffer.from(text, 'utf8')]);
}

/** A PREVIEW_IMAGE_WITH_METADATA frame: type 4, `metadata_len`, JSON metadata, image bytes. */
export function metadataPreviewFrame(metadata: Record<string, unknown>, image: Buffer): Buffer {
  const meta = Buffer.from(JSON.stringify(metadata), 'utf8');
  const head = Buffer.alloc(8);
  head.writeUInt32BE(4, 0);
  head.writeUInt32BE(meta.length, 4);
  return Buffer.concat([head, meta, image]);
}

/** The first bytes of a PNG and of a JPEG (enough for a signature check). */
export const PNG_BYTES = Buffer.from([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52,
]);
export const JPEG_BYTES = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0]);
