/**
 * Shared by the hostile-files-*.test.ts suites (files derived from untrusted server data): a route handler type,
 * a folder walk, servers that pace a body with setImmediate (no sleeps), an output record, and the checks that a name
 * is a safe base name.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import type * as http from 'node:http';
import * as path from 'node:path';
import { MAX_FILE_NAME_BYTES, safeFileName } from '../../src/core/util';

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** Every file (not folder) under `root`, as paths relative to it. */
export function walk(root: string, rel = ''): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
    const child = path.join(rel, entry.name);
    if (entry.isDirectory()) out.push(...walk(root, child));
    else out.push(child);
  }
  return out;
}

/** 200 with `bytes` written in `chunk`-byte pieces, one per turn of the event loop, so concurrent bodies interleave. */
export function sendPaced(
  res: http.ServerResponse,
  bytes: Buffer,
  chunk = 512,
  headers: Record<string, string> = {},
): void {
  res.writeHead(200, {
    'content-type': 'application/octet-stream',
    'content-length': String(bytes.length),
    ...headers,
  });
  let at = 0;
  const next = (): void => {
    if (at >= bytes.length) {
      res.end();
      return;
    }
    res.write(bytes.subarray(at, (at += chunk)));
    setImmediate(next);
  };
  next();
}

export function sendJson(res: http.ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** A job output item as a server sends it (Job and Asset API v2, Job `outputs[]`; fields from public sources). */
export function output(
  id: string,
  name: string | null,
  url: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    id,
    node_id: '9',
    name,
    type: 'file',
    content_type: 'application/octet-stream',
    size_bytes: 0,
    hash: null,
    url,
    url_expires_at: null,
    ...overrides,
  };
}

/** True when `name` holds a control character (C0, DEL, C1). */
export function hasControl(name: string): boolean {
  return [...name].some((ch) => {
    const c = ch.codePointAt(0)!;
    return c < 0x20 || (c >= 0x7f && c <= 0x9f);
  });
}

/** Asserts every property of a safe base name (one sanitizer for every name from server data). */
export function assertSafe(name: string, from: unknown): void {
  const what = `${JSON.stringify(from)} → ${JSON.stringify(name)}`;
  assert.ok(name.length > 0, `empty: ${what}`);
  assert.ok(!/[\\/]/.test(name), `separator: ${what}`);
  assert.ok(name !== '.' && name !== '..', `dot name: ${what}`);
  assert.ok(!name.startsWith('.'), `hidden: ${what}`);
  assert.ok(!/[. ]$/.test(name), `trailing dot or space: ${what}`);
  assert.ok(!hasControl(name), `control character: ${what}`);
  assert.ok(!/[<>:"|?*]/.test(name), `Windows-forbidden character: ${what}`);
  assert.ok(!/^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]) *(\.|$)/i.test(name), `Windows device name: ${what}`);
  assert.ok(Buffer.byteLength(name, 'utf8') <= MAX_FILE_NAME_BYTES, `longer than 255 bytes: ${what}`);
  assert.equal(Buffer.from(name, 'utf8').toString('utf8'), name, `not whole UTF-8 (a split character): ${what}`);
  assert.equal(safeFileName(name, 'unused'), name, `not idempotent: ${what}`);
}
