/**
 * One connection of the engine's WebSocket, shared by the APIs that speak it (the deprecated v1; a ComfyUI server's
 * native API: ComfyUI server API (observed), Following a job: the WebSocket). Written for v1 (Cloud API v1 (deprecated): Endpoints `GET /ws` and rule 3, Authentication rule 2,
 * Events), with `ws` (Node 20, VS Code's oldest host, has no global WebSocket).
 *
 * - URL: the base URL's origin and path prefix, `ws:`/`wss:`, `/ws?clientId=<fresh UUID>&token=<API key>`; the URL is
 *   never logged (the token is a secret). No `Origin` header is sent (the local engine answers 403 to a foreign one).
 * - {@link EngineSocket.open} resolves only once the socket is OPEN and the feature-flags message (public sources: type-4
 *   preview frames only after the client declares `supports_preview_metadata` in its first text message) has been sent:
 *   a prompt posted after it loses no event.
 * - Messages that arrive before a consumer listens are kept in a bounded backlog (at most {@link BACKLOG_MESSAGES}
 *   messages and {@link BACKLOG_BYTES} bytes, the oldest dropped), so the events between the POST and the watch are not
 *   lost either.
 * - Untrusted frames: at most `maxPayloadBytes` per message (`ws` closes the connection with 1009 past it); a binary
 *   frame that does not fit its layout is counted in {@link EngineSocket.malformedFrames} and dropped, never a crash.
 */
import { randomUUID } from 'node:crypto';
import type WebSocket from 'ws';
import { AbortError, ApiError, ConnectionError, TimeoutError } from '../http/errors';
import {
  FEATURE_FLAGS_MESSAGE,
  decodeBinaryFrame,
  parseTextMessage,
  type BinaryFrame,
  type TextMessage,
} from './frames';

/**
 * The `ws` module, required at the first connection: a v1 connection is its only user, and running it (with the http,
 * https, tls and zlib modules it loads) when the extension activates costs about 6 ms of CPU, measured by
 * `npm run bench -- activation`.
 */
function webSocketClass(): typeof WebSocket {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- required at first use, see above
  return require('ws') as typeof WebSocket;
}

/** One message of the socket: a JSON text message, or a decoded binary frame (malformed ones never reach a listener). */
export type EngineMessage = ({ kind: 'json' } & TextMessage) | Exclude<BinaryFrame, { kind: 'malformed' }>;

/** Messages kept at most before a listener attaches. */
const BACKLOG_MESSAGES = 512;
/** Bytes of messages kept at most before a listener attaches. */
const BACKLOG_BYTES = 16 * 1024 * 1024;

/** Options of {@link EngineSocket.open}. Times in ms, sizes in bytes. */
export interface EngineSocketOptions {
  /** The base URL of the API (http or https, with its path prefix). */
  baseUrl: string;
  /** Sent as `token`; none for an unauthenticated (local) engine. */
  apiKey?: string;
  /** Sent as the handshake's `Authorization` header (a ComfyUI server behind a proxy that asks for a Bearer key). */
  authorization?: string;
  /** Largest message accepted. Default 32 MiB. */
  maxPayloadBytes?: number;
  /** Time allowed for the handshake. Default 30 000. */
  handshakeTimeoutMs?: number;
  signal?: AbortSignal;
  /** User-Agent of the handshake. */
  userAgent?: string;
}

/**
 * The `ws:`/`wss:` URL of `/ws` under `baseUrl`, with `clientId` and, when given, `token` (Cloud API v1 (deprecated),
 * Endpoints).
 */
function webSocketUrl(baseUrl: string, clientId: string, apiKey?: string): URL {
  const base = new URL(baseUrl.replace(/\/+$/, ''));
  const url = new URL(`${base.pathname.replace(/\/+$/, '')}/ws`, base);
  url.protocol = base.protocol === 'https:' ? 'wss:' : 'ws:';
  url.searchParams.set('clientId', clientId);
  if (apiKey) url.searchParams.set('token', apiKey);
  return url;
}

/** An open v1 WebSocket. Close it when done. */
export class EngineSocket {
  /** Binary frames dropped because they did not fit their layout (Cloud API v1 (deprecated), Events). */
  malformedFrames = 0;
  /** Messages dropped from the backlog before a listener attached. */
  droppedMessages = 0;
  private listener: ((message: EngineMessage) => void) | undefined;
  private readonly backlog: { message: EngineMessage; bytes: number }[] = [];
  private backlogBytes = 0;
  private readonly closeListeners = new Set<(reason: string) => void>();
  private closedReason: string | undefined;

  private constructor(
    private readonly ws: WebSocket,
    /** The connection's `clientId` (rule 3: ignored by the cloud, unique for forward compatibility). */
    readonly clientId: string,
  ) {
    ws.on('message', (data, isBinary) => this.receive(data, isBinary));
    ws.on('close', (code, reason) =>
      this.ended(`the WebSocket closed (${code}${reason.length ? `: ${reason.toString('utf8').slice(0, 120)}` : ''})`),
    );
    ws.on('error', (err) => this.ended(`the WebSocket failed: ${err.message}`));
  }

  /**
   * Opens a connection with a fresh `clientId` and sends the feature-flags message.
   * @throws ApiError of the handshake's HTTP status when the server refused the upgrade (401, 403, 404, 5xx…);
   *   ConnectionError when it could not connect; TimeoutError after `handshakeTimeoutMs`; AbortError.
   */
  static open(options: EngineSocketOptions): Promise<EngineSocket> {
    const clientId = randomUUID();
    const url = webSocketUrl(options.baseUrl, clientId, options.apiKey);
    const shown = `${url.protocol}//${url.host}${url.pathname}`; // never the query: it holds the token
    const timeoutMs = options.handshakeTimeoutMs ?? 30_000;
    return new Promise<EngineSocket>((resolve, reject) => {
      if (options.signal?.aborted) {
        reject(new AbortError('aborted before connecting', {}, { requestSent: false }));
        return;
      }
      const ws = new (webSocketClass())(url, {
        maxPayload: options.maxPayloadBytes ?? 32 * 1024 * 1024,
        handshakeTimeout: timeoutMs,
        followRedirects: false,
        perMessageDeflate: false,
        headers: {
          'user-agent': options.userAgent ?? 'comfy-cloud',
          ...(options.authorization ? { authorization: options.authorization } : {}),
        },
      });
      let settled = false;
      const fail = (err: Error): void => {
        if (settled) return;
        settled = true;
        options.signal?.removeEventListener('abort', onAbort);
        ws.removeAllListeners();
        ws.on('error', () => undefined);
        ws.terminate();
        reject(err);
      };
      const onAbort = (): void => fail(new AbortError('aborted while connecting'));
      options.signal?.addEventListener('abort', onAbort, { once: true });
      ws.once('unexpected-response', (_req, res) => {
        const status = res.statusCode ?? 0;
        res.resume();
        fail(
          new ApiError({
            status,
            code:
              status === 401
                ? 'unauthorized'
                : status === 403
                  ? 'forbidden'
                  : status === 404
                    ? 'not_found'
                    : `http_${status}`,
            message: `the WebSocket ${shown} was refused with HTTP ${status}`,
            request: `GET ${shown}`,
          }),
        );
      });
      ws.once('error', (err) => {
        const timedOut = /timed out/i.test(err.message);
        fail(
          timedOut
            ? new TimeoutError(timeoutMs, { request: `GET ${shown}` })
            : new ConnectionError(
                `could not open the WebSocket ${shown}: ${err.message}`,
                { request: `GET ${shown}` },
                { cause: err },
              ),
        );
      });
      ws.once('open', () => {
        if (settled) return;
        const socket = new EngineSocket(ws, clientId);
        // The first text message declares the features (type-4 frames come only after it): sent before anything else,
        // awaited.
        ws.send(JSON.stringify(FEATURE_FLAGS_MESSAGE), (err) => {
          if (err) {
            fail(
              new ConnectionError(
                `the WebSocket ${shown} broke off: ${err.message}`,
                { request: `GET ${shown}` },
                { cause: err },
              ),
            );
            return;
          }
          if (settled) return;
          settled = true;
          options.signal?.removeEventListener('abort', onAbort);
          resolve(socket);
        });
      });
    });
  }

  /** True once the connection ended (closed, failed, or closed by {@link close}). */
  get closed(): boolean {
    return this.closedReason !== undefined;
  }

  /**
   * Sets THE consumer of messages (one at a time; a new one replaces the old): it first receives the backlog, in
   * order, then every message as it comes. Returns a function that detaches it.
   */
  listen(listener: (message: EngineMessage) => void): () => void {
    this.listener = listener;
    while (this.backlog.length > 0 && this.listener === listener) {
      const { message } = this.backlog.shift()!;
      listener(message);
    }
    this.backlogBytes = 0;
    return () => {
      if (this.listener === listener) this.listener = undefined;
    };
  }

  /** Calls `listener` once when the connection ends (at once, when it already has), with a reason for a person. */
  onClose(listener: (reason: string) => void): () => void {
    if (this.closedReason !== undefined) {
      listener(this.closedReason);
      return () => undefined;
    }
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  /** Closes the connection now (no closing handshake is waited for). */
  close(): void {
    this.ended('closed by the client');
    this.ws.terminate();
  }

  private ended(reason: string): void {
    if (this.closedReason !== undefined) return;
    this.closedReason = reason;
    for (const l of [...this.closeListeners]) l(reason);
    this.closeListeners.clear();
  }

  private receive(data: WebSocket.RawData, isBinary: boolean): void {
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    let message: EngineMessage | undefined;
    if (isBinary) {
      const frame = decodeBinaryFrame(bytes);
      if (frame.kind === 'malformed') {
        this.malformedFrames++;
        return;
      }
      message = frame;
    } else {
      const parsed = parseTextMessage(bytes.toString('utf8'));
      if (!parsed) return; // not `{type, data}`: ignored like an unknown type
      message = { kind: 'json', ...parsed };
    }
    if (this.listener) {
      this.listener(message);
      return;
    }
    const size = bytes.length;
    this.backlog.push({ message, bytes: size });
    this.backlogBytes += size;
    while (this.backlog.length > BACKLOG_MESSAGES || this.backlogBytes > BACKLOG_BYTES) {
      this.backlogBytes -= this.backlog.shift()!.bytes;
      this.droppedMessages++;
    }
  }
}
