/**
 * The ComfyUI server's WebSocket, `GET /ws?clientId=<id>` (bare and under `/api`, below the surface's prefix), served
 * with `ws` on the emulator's HTTP server (ComfyUI server API (observed), Following a job: the WebSocket):
 * - no authentication (`token` is ignored);
 * - on connect `status {status: {exec_info: {queue_remaining}}, sid}`, `sid` the clientId (a fresh hex id without one);
 * - a client's `{"type": "feature_flags", "data": {...}}` is answered with the server's `feature_flags
 *   {supports_preview_metadata, max_upload_size}`; `supports_preview_metadata: true` in it makes that socket's
 *   previews type 4 (with metadata) instead of type 1;
 * - a message is sent to the sockets of one clientId, or to every socket.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { isPlainObject } from '../../core/util/workflow';

/** The largest upload the server announces (its `max_upload_size`, bytes; ComfyUI server API (observed), /features). */
export const MAX_UPLOAD_SIZE = 104_857_600;

/** The server's feature flags (GET /features and the socket's `feature_flags` answer). */
export const FEATURE_FLAGS = { supports_preview_metadata: true, max_upload_size: MAX_UPLOAD_SIZE } as const;

/** A text message `{type, data}`. */
export interface ComfyMessage {
  readonly type: string;
  readonly data: Record<string, unknown>;
}

/** What one socket is sent: a JSON message, or binary bytes chosen by whether it announced preview metadata. */
export type Outgoing = { readonly json: ComfyMessage } | { readonly binary: (previewMetadata: boolean) => Buffer };

interface Connection {
  readonly socket: WebSocket;
  readonly clientId: string;
  previewMetadata: boolean;
}

/** The open sockets of the ComfyUI surface. */
export class ComfySockets {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  private readonly connections = new Set<Connection>();
  private closed = false;

  /**
   * @param paths the request paths served (e.g. `/comfyui/ws`, `/comfyui/api/ws`).
   * @param greeting the `status` message sent on connect.
   */
  constructor(
    private readonly paths: readonly string[],
    private readonly greeting: () => ComfyMessage,
  ) {}

  /** The server's `upgrade` listener part. @returns false when the request is not for one of {@link paths}. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const target = new URL(req.url ?? '/', 'http://emulator');
    if (!this.paths.includes(target.pathname)) return false;
    socket.on('error', () => socket.destroy());
    if (this.closed) {
      socket.destroy();
      return true;
    }
    // Without a clientId the server names the socket itself (a hex id without dashes).
    const clientId = target.searchParams.get('clientId') || randomUUID().replace(/-/g, '');
    this.wss.handleUpgrade(req, socket, head, (ws) => this.attach(ws, clientId));
    return true;
  }

  /** Sends `message` to the sockets of `clientId`, or to every socket when `clientId` is 'all'. */
  send(clientId: string | 'all', message: Outgoing): void {
    for (const c of [...this.connections]) if (clientId === 'all' || c.clientId === clientId) this.write(c, message);
  }

  /** How many sockets are open. */
  openCount(): number {
    return this.connections.size;
  }

  /** Closes every socket and refuses new ones. */
  close(): void {
    this.closed = true;
    for (const c of this.connections) c.socket.terminate();
    this.connections.clear();
    this.wss.close();
  }

  private attach(socket: WebSocket, clientId: string): void {
    const connection: Connection = { socket, clientId, previewMetadata: false };
    this.connections.add(connection);
    socket.on('close', () => this.connections.delete(connection));
    socket.on('error', () => socket.terminate());
    socket.on('message', (data, isBinary) => {
      if (isBinary) return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(data.toString());
      } catch {
        return; // a message the server does not understand is ignored
      }
      if (!isPlainObject(parsed) || parsed.type !== 'feature_flags') return;
      connection.previewMetadata = isPlainObject(parsed.data) && parsed.data.supports_preview_metadata === true;
      this.write(connection, { json: { type: 'feature_flags', data: { ...FEATURE_FLAGS } } });
    });
    const greeting = this.greeting();
    this.write(connection, { json: { type: greeting.type, data: { ...greeting.data, sid: clientId } } });
  }

  private write(connection: Connection, message: Outgoing): void {
    if (connection.socket.readyState !== connection.socket.OPEN) return;
    if ('json' in message) connection.socket.send(JSON.stringify(message.json));
    else connection.socket.send(message.binary(connection.previewMetadata), { binary: true });
  }
}
