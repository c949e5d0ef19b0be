/**
 * Shared by the emulator-assets-*.test.ts suites (the emulator's assets over real HTTP): a call that answers redirects
 * rather than following them, multipart bodies (metadata before the file), from-hash and by-hash requests, a
 * LoadImage workflow over an asset, and the emulator's data folders.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type Emulator } from '../../src/emulator';
import { call as fetchAnswer, type Answer, type Json } from './harness';
import { tempDir } from './tmp';

/** The shared `call`, but redirects are answered, not followed (the signed-URL tests read the 302 itself). */
export function call(url: string, init: RequestInit = {}): Promise<Answer> {
  return fetchAnswer(url, { ...init, redirect: 'manual' });
}

/** One multipart part, for bodies with the parts in any order (also orders a conforming client would never send). */
export interface Part {
  name: string;
  value: string | Buffer;
  filename?: string;
  type?: string;
}

/** A multipart/form-data body with exactly these parts in this order, encoded by the platform's FormData (undici). */
export async function multipart(parts: Part[]): Promise<{ body: Buffer; contentType: string }> {
  const form = new FormData();
  for (const p of parts) {
    if (typeof p.value === 'string' && p.filename === undefined) form.append(p.name, p.value);
    else form.append(p.name, new Blob([p.value], { type: p.type ?? '' }), p.filename);
  }
  const encoded = new Response(form);
  return { body: Buffer.from(await encoded.arrayBuffer()), contentType: encoded.headers.get('content-type')! };
}

/** The metadata parts a conforming upload sends first. */
export function metadata(filePath: string, contentType = 'application/octet-stream', extra: Part[] = []): Part[] {
  return [{ name: 'content_type', value: contentType }, { name: 'file_path', value: filePath }, ...extra];
}

export function fileParts(
  bytes: Buffer,
  filePath = 'data.bin',
  extra: Part[] = [],
  contentType = 'application/octet-stream',
): Part[] {
  return [
    ...metadata(filePath, contentType, extra),
    { name: 'file', value: bytes, filename: filePath, type: contentType },
  ];
}

export async function postMultipart(
  emu: Emulator,
  parts: Part[],
  headers: Record<string, string> = {},
): Promise<Answer> {
  const { body, contentType } = await multipart(parts);
  return call(`${emu.baseUrl}/api/v2/assets`, {
    method: 'POST',
    headers: { 'content-type': contentType, ...headers },
    body,
  });
}

/** Uploads with the platform's own FormData encoder (undici), metadata first, as a client does. */
export function uploadForm(
  emu: Emulator,
  bytes: Buffer,
  fields: Record<string, string | string[]>,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields))
    for (const v of Array.isArray(value) ? value : [value]) form.append(name, v);
  form.append(
    'file',
    new Blob([bytes], {
      type: typeof fields.content_type === 'string' ? fields.content_type : 'application/octet-stream',
    }),
    'file',
  );
  return call(`${emu.baseUrl}/api/v2/assets`, { method: 'POST', headers, body: form });
}

export function fromHash(emu: Emulator, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return call(`${emu.baseUrl}/api/v2/assets/from-hash`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

export function byHash(emu: Emulator, hash: string, headers: Record<string, string> = {}): Promise<Answer> {
  return call(`${emu.baseUrl}/api/v2/assets/by-hash/${encodeURIComponent(hash)}`, { method: 'HEAD', headers });
}

/** LoadImage(asset) → ImageInvert → SaveImage. */
export function loadInvertSave(assetId: string): Json {
  return {
    '1': {
      class_type: 'LoadImage',
      inputs: { image: { __type: 'core/ASSET', info: { id: assetId, file_path: 'red.png' } } },
    },
    '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
    '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'loaded' } },
  };
}

export function tmpDir(): string {
  return tempDir('cc-emu-assets-');
}

/** The files in `<dataDir>/<sub>`. */
export function filesIn(dataDir: string, sub: 'blobs' | 'tmp'): string[] {
  return fs.readdirSync(path.join(dataDir, sub));
}
