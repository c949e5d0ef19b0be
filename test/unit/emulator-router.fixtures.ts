/**
 * Shared by the emulator-router-*.test.ts suites (the model router on the emulator, over real HTTP with plain fetch):
 * GET and POST with the router key, the check of an error bucket, a walk of the whole catalog, and the collection of a
 * slow model's answer by repeated requests, each held by the router's own (short) deadline (no sleeps).
 */
import * as assert from 'node:assert/strict';
import { TEST_ROUTER_KEY, type Emulator } from '../../src/emulator';
import { call, type Answer, type Json } from './harness';

export const AUTH = { authorization: `Bearer ${TEST_ROUTER_KEY}` };

export function get(emu: Emulator, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return call(`${emu.routerUrl}${path}`, { headers: { ...AUTH, ...headers } });
}

export function post(emu: Emulator, path: string, body: string, headers: Record<string, string> = {}): Promise<Answer> {
  return call(`${emu.routerUrl}${path}`, {
    method: 'POST',
    headers: { ...AUTH, 'content-type': 'application/json', ...headers },
    body,
  });
}

/** Asserts a router error: status, `{detail, error_type}` and both headers. */
export function assertBucket(a: Answer, status: number, bucket: string): void {
  assert.equal(a.status, status, a.text);
  assert.equal(a.body.error_type, bucket, a.text);
  assert.equal(typeof a.body.detail, 'string');
  assert.equal(a.headers.get('x-svc-error-type'), bucket);
  assert.ok(a.headers.get('x-svc-request-id'));
}

/** Walks the catalog with `limit`, following next_cursor while has_more (bounded). */
export async function walk(emu: Emulator, limit?: number): Promise<Json[]> {
  const pages: Json[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 1000; i++) {
    const q = new URLSearchParams();
    if (limit !== undefined) q.set('limit', String(limit));
    if (cursor !== undefined) q.set('cursor', cursor);
    const a = await get(emu, `/v1/models?${q}`);
    assert.equal(a.status, 200, a.text);
    pages.push(a.body);
    if (!a.body.has_more) return pages;
    cursor = a.body.next_cursor;
  }
  throw new Error('the catalog never ended');
}

/** Retries the POST with the same key until it answers 200, each attempt held by the router's deadline (bounded). */
export async function collect(emu: Emulator, path: string, body: string, key: string): Promise<Answer> {
  for (let i = 0; i < 200; i++) {
    const a = await post(emu, path, body, { 'idempotency-key': key });
    if (a.status === 200) return a;
    assertBucket(a, 504, 'deadline_exceeded');
  }
  throw new Error(`key ${key} never collected`);
}
