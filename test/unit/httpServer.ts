/** A real HTTP server on a random loopback port for transport tests (no HTTP mocking library). */
import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { V2Client } from '../../src/core/v2/client';

export interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

export interface TestServer {
  origin: string;
  seen: Seen[];
  close(): Promise<void>;
}

/** Starts a server that records each request and answers with `handler`. */
export async function startServer(
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => void,
): Promise<TestServer> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Writes `chunk` until the client goes away or `maxBytes` have been sent, honouring back-pressure (an endless body). */
export function pushEndlessly(res: http.ServerResponse, chunk: Buffer, maxBytes: number): void {
  let sent = 0;
  const pump = (): void => {
    while (sent < maxBytes && !res.destroyed) {
      sent += chunk.length;
      if (!res.write(chunk)) {
        res.once('drain', pump);
        return;
      }
    }
    if (!res.destroyed) res.end();
  };
  res.on('close', () => (sent = maxBytes));
  pump();
}

/** A loopback port with nothing listening on it (a refused connection). */
export async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** A schema that takes any JSON, for transport tests that are not about shapes. */
export const anySchema = { safeParse: (v: unknown) => ({ success: true as const, data: v }) };

/**
 * For one mocha block: a server answering with `handler` and a V2Client of it, started before the block's tests
 * and closed after them; `use` receives both (the block keeps them in its own variables).
 */
export function useServerAndClient(
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => void,
  use: (server: TestServer, client: V2Client) => void,
): void {
  let server: TestServer | undefined;
  let client: V2Client | undefined;
  before(async () => {
    server = await startServer(handler);
    client = new V2Client({ baseUrl: server.origin });
    use(server, client);
  });
  after(async () => {
    await client?.close();
    await server?.close();
  });
}
