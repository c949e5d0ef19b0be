/**
 * The owners of an emulator an editor started ("Start Local Emulator"): the emulator outlives the window that started
 * it (a window reload restarts the extension host, and a job running on the emulator must not end with it), and stops
 * once no window holds it any more. Each window holds it with one long request; the emulator stops `graceMs` after
 * the last one ended (the time a reload takes), or at once when an owner asks. Not part of the contract: served at the
 * origin root beside the control endpoint (control.ts), outside the mount prefix, only with the owner token.
 *
 * - `GET /__emulator/owner` with `Authorization: Bearer <owner token>` → 200 `application/x-ndjson`, one line
 *   `{"pid": n, "owners": n}`, then the response stays open while the owner holds the emulator; its end (the owner's
 *   window closed, its extension host gone) releases it. The emulator ending the response means it stops.
 * - `POST /__emulator/owner/stop` with the token → 202 `{"stopping": true}`, then the emulator stops.
 * - A missing or wrong token → 401 `unauthorized`; another method → 404 `not_found`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import { EmulatorError } from './errors';
import { sendJson } from './http';

/** Where the owners' operations live. */
export const OWNER_PATH = '/__emulator/owner';

/** Why an owned emulator stops. */
export type ReleaseReason = 'orphaned' | 'stop';

/** Options of {@link Owners}. */
export interface OwnerOptions {
  /** The secret an owner presents (`Authorization: Bearer …`); the starter passes it in the environment. */
  token: string;
  /**
   * How long the emulator waits for an owner (ms): after the last owner's request ended, and from the start for the
   * first one. Then it stops.
   */
  graceMs: number;
  /** Called once, when the emulator is to stop: no owner for `graceMs` (`orphaned`), or an owner asked (`stop`). */
  onRelease(reason: ReleaseReason): void;
  /** Timers (tests inject their own); default the global ones. */
  timers?: { set(fn: () => void, ms: number): unknown; clear(handle: unknown): void };
}

/** The owners' requests of one emulator (see the module's comment). */
export class Owners {
  private readonly held = new Set<ServerResponse>();
  private timer: unknown;
  private released = false;
  private readonly timers: NonNullable<OwnerOptions['timers']>;

  constructor(private readonly options: OwnerOptions) {
    this.timers = options.timers ?? {
      set: (fn, ms) => setTimeout(fn, ms).unref(),
      clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
    };
    // The starter may die before it holds the emulator: the same grace from the start.
    this.arm();
  }

  /** How many owners hold the emulator now. */
  get count(): number {
    return this.held.size;
  }

  /** True for a path this module answers. */
  owns(path: string): boolean {
    return path === OWNER_PATH || path === `${OWNER_PATH}/stop`;
  }

  /** Answers an owner's request (`path` without its query). @throws EmulatorError `unauthorized`, `not_found`. */
  async handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    if (!this.authorized(req.headers.authorization))
      throw new EmulatorError('unauthorized', 'the owner operations need the owner token of this emulator');
    if (path === OWNER_PATH && req.method === 'GET') return this.hold(res);
    if (path === `${OWNER_PATH}/stop` && req.method === 'POST') {
      sendJson(res, 202, { stopping: true });
      this.release('stop');
      return;
    }
    throw new EmulatorError('not_found', `${req.method} ${path}: use GET ${OWNER_PATH} or POST ${OWNER_PATH}/stop`);
  }

  /** Ends every owner's request (the emulator stops). Idempotent. */
  close(): void {
    this.released = true;
    this.timers.clear(this.timer);
    for (const res of this.held) res.end();
    this.held.clear();
  }

  private hold(res: ServerResponse): void {
    this.held.add(res);
    this.timers.clear(this.timer);
    res.once('close', () => {
      if (!this.held.delete(res)) return;
      if (this.held.size === 0) this.arm();
    });
    res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
    // The first line tells the owner it holds the emulator; the response then stays open.
    res.write(`${JSON.stringify({ pid: process.pid, owners: this.held.size })}\n`);
    if (this.released) res.end();
  }

  private arm(): void {
    if (this.released) return;
    this.timers.clear(this.timer);
    this.timer = this.timers.set(() => {
      if (this.held.size === 0) this.release('orphaned');
    }, this.options.graceMs);
  }

  private release(reason: ReleaseReason): void {
    if (this.released) return;
    this.released = true;
    this.timers.clear(this.timer);
    this.options.onRelease(reason);
  }

  private authorized(header: string | undefined): boolean {
    const given = Buffer.from(/^Bearer (.+)$/.exec(header ?? '')?.[1] ?? '');
    const expected = Buffer.from(this.options.token);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}
