/**
 * A window's hold on the local emulator it shares with the other windows (the emulator's owner operations,
 * `GET /__emulator/owner` and `POST /__emulator/owner/stop` with the owner token), and the record file that tells the
 * next window where the running one is. The emulator stops once no window held it for its grace time.
 */
import * as fs from 'node:fs/promises';
import * as http from 'node:http';
import * as path from 'node:path';
import { parseJsonObject, writeJsonAtomically } from '../../core/state';

/** What the record file keeps of the running emulator: enough for another window to find and hold it. */
export interface EmulatorRecord {
  pid: number;
  /** Its base URL (loopback http). */
  baseUrl: string;
  /** The owner token (a secret of this machine's user; the file is theirs alone). */
  token: string;
}

/** An owner's request held open: the emulator runs while some window holds one. */
export interface OwnerHold {
  /** The emulator's pid, as it said. */
  readonly pid: number;
  /** Resolves when the hold ended: released, or the emulator stopped or died. */
  readonly ended: Promise<void>;
  /** Lets go (idempotent): the emulator stops after its grace time unless another window holds it. */
  release(): void;
}

/** The record in `file`, or undefined when there is none or it is damaged. Never throws. */
export async function readRecord(file: string): Promise<EmulatorRecord | undefined> {
  const r = parseJsonObject(await fs.readFile(file, 'utf8').catch(() => ''));
  if (r && typeof r.pid === 'number' && typeof r.baseUrl === 'string' && typeof r.token === 'string')
    return { pid: r.pid, baseUrl: r.baseUrl, token: r.token };
  return undefined;
}

/** Writes `record` to `file` (readable by the user alone), whole or not at all (a temporary file renamed). */
export async function writeRecord(file: string, record: EmulatorRecord): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  await writeJsonAtomically(file, record, `${file}.${process.pid}.tmp`);
}

/** Removes `file` when it still records the emulator of `token` (another window may have started a new one). */
export async function removeRecord(file: string, token: string): Promise<void> {
  if ((await readRecord(file))?.token === token) await fs.rm(file, { force: true });
}

/**
 * Holds the emulator at `baseUrl`: resolves once it answered its first line.
 * @throws Error when it does not answer as an owned emulator with this token within `timeoutMs` (gone, another
 *   program on the port, another token).
 */
export function holdEmulator(baseUrl: string, token: string, timeoutMs: number): Promise<OwnerHold> {
  return new Promise<OwnerHold>((resolve, reject) => {
    const req = http.get(new URL('/__emulator/owner', baseUrl), {
      headers: { authorization: `Bearer ${token}` },
      agent: false,
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    let settled = false;
    const fail = (err: Error): void => {
      clearTimeout(timer);
      if (!settled) reject(err);
      settled = true;
    };
    req.once('error', fail);
    req.once('response', (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        req.destroy();
        fail(new Error(`the owner operation answered ${res.statusCode}`));
        return;
      }
      let first = '';
      res.setEncoding('utf8');
      const ended = new Promise<void>((done) => {
        res.once('close', done);
        req.once('close', done);
      });
      res.on('data', (chunk: string) => {
        if (settled) return;
        first += chunk;
        const nl = first.indexOf('\n');
        if (nl < 0) return;
        let pid: number;
        try {
          pid = Number((JSON.parse(first.slice(0, nl)) as { pid?: unknown }).pid);
        } catch {
          pid = NaN;
        }
        if (!Number.isInteger(pid)) {
          req.destroy();
          fail(new Error('the owner operation answered something else than an emulator'));
          return;
        }
        clearTimeout(timer);
        settled = true;
        // An error after the first line (the emulator died) only ends the hold.
        req.on('error', () => undefined);
        resolve({ pid, ended, release: () => req.destroy() });
      });
      res.once('end', () => fail(new Error('the owner operation ended before its first line')));
    });
  });
}

/**
 * Asks the emulator at `baseUrl` to stop. Resolves true when it said it stops (202), false when it did not answer as
 * the emulator of `token`. Never throws.
 */
export function askToStop(baseUrl: string, token: string, timeoutMs: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const req = http.request(new URL('/__emulator/owner/stop', baseUrl), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-length': '0' },
      agent: false,
      timeout: timeoutMs,
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(false));
    req.once('response', (res) => {
      res.resume();
      resolve(res.statusCode === 202);
    });
    req.end();
  });
}
