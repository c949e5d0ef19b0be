/**
 * The v1 WebSocket, `GET /ws?clientId=<id>&token=<API key>` under the emulator's mount prefix
 * (Cloud API v1 (deprecated): Endpoints, Authentication rule 2, Events), served with `ws` on the emulator's HTTP server
 * (`noServer`, on its `upgrade` event).
 *
 * Rules:
 * - the key is the `token` query parameter (401 on the upgrade when keys are configured and it is missing or
 *   wrong); `clientId` is accepted and ignored (rule 3: a unique value is passed for forward compatibility);
 * - every connection of a user receives every message of that user's jobs (rule 3), whatever its clientId;
 * - on connect the server sends `status` (the queue); nothing else is sent on an idle connection: no heartbeat
 *   (as the public service: a client polls alongside);
 * - the connection's first text message may declare `{"type": "feature_flags", "data":
 *   {"supports_preview_metadata": true}}` (not shown in the document; public sources); the server answers with its
 *   own `feature_flags`, and from then on that connection gets previews as PREVIEW_IMAGE_WITH_METADATA (type 4)
 *   instead of PREVIEW_IMAGE
 *   (type 1). A later feature_flags message changes nothing; any other message is ignored;
 * - faults (faults.ts, route kind `v1:ws`): before the upgrade `status` (an HTTP error answer instead of the
 *   upgrade), `reset`, `delay`; once open, `dropStream` (after N frames, text and binary counted alike, a close
 *   frame 1001 `how=end` or a dropped TCP connection `how=reset`) and `silentStream` (N frames, then nothing).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Faults, StreamFault } from '../faults';
import type { RecordedRequest } from '../router';
import type { KeyCheck } from './auth';

/** A text message of the socket: `{type, data}`. */
export interface SocketMessage {
  readonly type: string;
  readonly data: Record<string, unknown>;
}

/** What one connection is sent: a JSON message, or binary bytes chosen per connection (its feature flags). */
type Outgoing = { readonly json: SocketMessage } | { readonly binary: (connection: ConnectionInfo) => Buffer };

/** What a frame builder may know about the connection it is for. */
interface ConnectionInfo {
  readonly clientId: string;
  /** The connection declared `supports_preview_metadata` in its first message. */
  readonly previewMetadata: boolean;
}

interface Connection extends ConnectionInfo {
  readonly socket: WebSocket;
  readonly owner: string;
  previewMetadata: boolean;
  /** Text messages received so far (only the first may declare feature flags). */
  received: number;
  frames: number;
  readonly fault: StreamFault | undefined;
  /** Cut by a fault: nothing more is sent (silenced, or closing). */
  cut: boolean;
}

/** What the socket hub needs. */
interface SocketHubOptions {
  readonly mountPrefix: string;
  readonly keys: KeyCheck;
  readonly faults: Faults;
  /** Upgrade requests are appended here, as the HTTP requests are (the `token` stays in `path`: a test tool). */
  readonly requests: RecordedRequest[];
  readonly log?: (line: string) => void;
  /** The message sent on connect (the queue of `owner`). */
  readonly greeting: (owner: string, clientId: string) => SocketMessage;
}

/** Writes a plain HTTP answer on a socket that asked to upgrade, then closes it. */
function refuseUpgrade(
  socket: Duplex,
  status: number,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  const reason =
    {
      400: 'Bad Request',
      401: 'Unauthorized',
      403: 'Forbidden',
      404: 'Not Found',
      429: 'Too Many Requests',
      500: 'Internal Server Error',
      502: 'Bad Gateway',
      503: 'Service Unavailable',
    }[status] ?? 'Error';
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n${extra}\r\n${text}`,
  );
}

/** The open v1 WebSockets, per owner. */
export class SocketHub {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  private readonly connections = new Set<Connection>();
  private closed = false;

  constructor(private readonly options: SocketHubOptions) {}

  /** The path the socket is served at (mount prefix included). */
  get path(): string {
    return `${this.options.mountPrefix}/ws`;
  }

  /**
   * The HTTP server's `upgrade` listener. @returns false when the request is not for `/ws` (the caller answers it).
   * Never throws: every refusal is an HTTP answer on the socket.
   */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const target = req.url ?? '/';
    const queryAt = target.indexOf('?');
    const path = queryAt < 0 ? target : target.slice(0, queryAt);
    if (path !== this.path) return false;
    const query = new URLSearchParams(queryAt < 0 ? '' : target.slice(queryAt + 1));
    const requestId = randomUUID();
    this.options.requests.push({ method: req.method ?? 'GET', path: target, headers: { ...req.headers } });
    // Never the query: it carries the key.
    this.options.log?.(`GET ${path} (WebSocket upgrade) request-id ${requestId}`);
    socket.on('error', () => socket.destroy());
    if (this.closed) {
      socket.destroy();
      return true;
    }
    const owner = this.options.keys.ownerOfKey(query.get('token') ?? undefined);
    if (owner === undefined) {
      refuseUpgrade(socket, 401, {
        code: 'unauthorized',
        message: query.get('token')
          ? 'the token is not valid for this service'
          : 'missing credentials: pass the API key as the token query parameter',
      });
      return true;
    }
    const clientId = query.get('clientId') ?? '';
    const faultRequest = {
      method: 'GET',
      path: target.replace(/([?&]token=)[^&]*/, '$1…'),
      route: 'v1Socket',
      owner,
      requestId,
    };
    const fault = this.options.faults.before(faultRequest);
    if (fault?.kind === 'reset') {
      socket.destroy();
      return true;
    }
    if (fault?.kind === 'status') {
      const { answer } = fault;
      refuseUpgrade(
        socket,
        answer.status,
        { code: answer.code, message: answer.message },
        answer.retryAfter === undefined ? {} : { 'retry-after': String(answer.retryAfter) },
      );
      return true;
    }
    const accept = (): void => {
      if (this.closed || socket.destroyed) {
        socket.destroy();
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) =>
        this.attach(ws, owner, clientId, this.options.faults.eventStream(faultRequest)),
      );
    };
    if (fault?.kind === 'delay') this.options.faults.sleep(fault.ms).then(accept, () => socket.destroy());
    else accept();
    return true;
  }

  /** Sends `message` to every open connection of `owner`. */
  send(owner: string, message: Outgoing): void {
    for (const c of [...this.connections]) if (c.owner === owner) this.write(c, message);
  }

  /** How many connections are open (all owners). */
  openCount(): number {
    return this.connections.size;
  }

  /** Closes every connection (1001) and refuses new ones: the emulator is closing. */
  close(): void {
    this.closed = true;
    for (const c of this.connections) c.socket.terminate();
    this.connections.clear();
    this.wss.close();
  }

  private attach(socket: WebSocket, owner: string, clientId: string, fault: StreamFault | undefined): void {
    const connection: Connection = {
      socket,
      owner,
      clientId,
      previewMetadata: false,
      received: 0,
      frames: 0,
      fault,
      cut: false,
    };
    this.connections.add(connection);
    socket.on('close', () => this.connections.delete(connection));
    socket.on('error', () => socket.terminate());
    socket.on('message', (data, isBinary) => {
      connection.received++;
      if (isBinary || connection.received !== 1) return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(data.toString());
      } catch {
        return; // tolerant: a message the server does not understand is ignored
      }
      const message = parsed as { type?: unknown; data?: { supports_preview_metadata?: unknown } };
      if (message?.type !== 'feature_flags') return;
      connection.previewMetadata = message.data?.supports_preview_metadata === true;
      this.write(connection, { json: { type: 'feature_flags', data: { supports_preview_metadata: true } } });
    });
    if (fault !== undefined && fault.afterFrames === 0) {
      this.cut(connection);
      return;
    }
    this.write(connection, { json: this.options.greeting(owner, clientId) });
  }

  private write(connection: Connection, message: Outgoing): void {
    if (connection.cut || connection.socket.readyState !== connection.socket.OPEN) return;
    if ('json' in message) connection.socket.send(JSON.stringify(message.json));
    else connection.socket.send(message.binary(connection), { binary: true });
    connection.frames++;
    if (connection.fault !== undefined && connection.frames >= connection.fault.afterFrames) this.cut(connection);
  }

  /** Applies the connection's fault: a close frame 1001, a dropped connection, or silence. */
  private cut(connection: Connection): void {
    connection.cut = true;
    const then = connection.fault?.then;
    if (then === 'end') connection.socket.close(1001, "dropped by the emulator's fault plan");
    else if (then === 'reset') {
      // After the frames already queued are flushed: the client gets them, then a connection that broke without a close frame.
      const raw = (connection.socket as unknown as { _socket?: Duplex })._socket;
      if (raw !== undefined) raw.end();
      else connection.socket.terminate();
    }
    // 'silent': stays open, gets nothing more (no close until the emulator closes).
  }
}
