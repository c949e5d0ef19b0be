/**
 * Shared by the assets-client-*.test.ts suites (the client core's assets against loopback servers and the emulator):
 * server answers for whole, ranged and cut bodies, a partial download left behind, and an upload server that records
 * each request with its whole body (multipart parts parsed by busboy).
 */
import busboy from 'busboy';
import * as assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import type * as http from 'node:http';
import { partialPaths } from '../../src/core/http/download';
import { startServer, type TestServer } from './httpServer';
import { tempDir } from './tmp';

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export function tmpDir(): string {
  return tempDir('cc-assets-client-');
}

/** The start of a `Range: bytes=<start>-` header; undefined without one. */
export function rangeStart(req: http.IncomingMessage): number | undefined {
  const match = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
  return match ? Number(match[1]) : undefined;
}

/** 200 with the whole content (whatever Range said). */
export function sendWhole(res: http.ServerResponse, bytes: Buffer): void {
  res.writeHead(200, {
    'content-type': 'application/octet-stream',
    'content-length': bytes.length,
    'accept-ranges': 'bytes',
  });
  res.end(bytes);
}

/** 206 with the content from `start` to the end. */
export function sendFrom(res: http.ServerResponse, bytes: Buffer, start: number): void {
  res.writeHead(206, {
    'content-type': 'application/octet-stream',
    'content-range': `bytes ${start}-${bytes.length - 1}/${bytes.length}`,
    'content-length': bytes.length - start,
  });
  res.end(bytes.subarray(start));
}

/** 200 announcing the whole content (Content-Length), then the socket is destroyed once `n` bytes are sent. */
export function sendCut(res: http.ServerResponse, bytes: Buffer, n: number): void {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.length });
  res.write(bytes.subarray(0, n), () => res.socket?.destroy());
}

/** Leaves a partial download of `key` beside `target`, as an interrupted download does (`.part` + `.part.json`). */
export function leavePart(target: string, bytes: Buffer, key: string): void {
  const { part, note } = partialPaths(target, key);
  fs.writeFileSync(part, bytes);
  fs.writeFileSync(note, JSON.stringify({ key }));
}

export interface Call {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A server that reads each request's body, records it, then answers with `answer`. */
export async function startApi(
  answer: (call: Call, res: http.ServerResponse) => void,
): Promise<{ server: TestServer; calls: Call[] }> {
  const calls: Call[] = [];
  const server = await startServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const call = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
      calls.push(call);
      answer(call, res);
    });
  });
  return { server, calls };
}

export function sendJson(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(body);
}

/** The parts of a multipart/form-data body, in wire order, as `busboy` reads them. */
export async function multipartParts(call: Call): Promise<{ name: string; value: Buffer }[]> {
  assert.match(String(call.headers['content-type']), /^multipart\/form-data; boundary=/, 'a multipart body');
  const parts: { name: string; value: Buffer }[] = [];
  const parser = busboy({ headers: call.headers });
  parser.on('field', (name, value) => parts.push({ name, value: Buffer.from(value) }));
  parser.on('file', (name, stream) => {
    const part = { name, value: Buffer.alloc(0) };
    parts.push(part);
    stream.on('data', (chunk: Buffer) => (part.value = Buffer.concat([part.value, chunk])));
  });
  await new Promise<void>((resolve, reject) => {
    parser.on('close', resolve);
    parser.on('error', reject);
    parser.end(call.body);
  });
  return parts;
}

/**
 * An asset record with every field the Asset schema reads (Job and Asset API v2, Asset; fields from public sources).
 */
export function assetRecord(origin: string, hash: string, size: number, filePath: string, createdNew: boolean): string {
  const id = randomUUID();
  return JSON.stringify({
    id,
    hash,
    size_bytes: size,
    content_type: 'application/octet-stream',
    created_at: new Date().toISOString(),
    url: `${origin}/api/v2/assets/${id}/content`,
    url_expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    file_path: filePath,
    created_new: createdNew,
  });
}

/** `METHOD /path` of each call, the hash in a by-hash path shortened to `{hash}`. */
export function routes(calls: Call[]): string[] {
  return calls.map((c) => `${c.method} ${c.path.replace(/by-hash\/.*/, 'by-hash/{hash}')}`);
}
