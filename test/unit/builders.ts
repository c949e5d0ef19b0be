/** Builders for test data: an error envelope of each code, the typed error of a code, a job in each status. */
import * as assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ERROR_STATUS, errorFromResponse } from '../../src/core/v2/errors';
import { InputError, type ApiError } from '../../src/core';

/** The HTTP status the v2 document gives each error code (the core's one table). */
export const STATUS_OF_CODE: Record<string, number> = ERROR_STATUS;

export function errorEnvelope(
  code: string,
  message = `${code} happened`,
  details?: Record<string, unknown> | null,
): string {
  return JSON.stringify({ error: { code, message, ...(details !== undefined ? { details } : {}) } });
}

/**
 * The typed error the v2 client makes of an envelope of `code` (with the table's status, 500 for a code not in it),
 * with a Retry-After (s) when given.
 */
export function apiErrorOf(code: string, retryAfter?: number): ApiError {
  return errorFromResponse(
    STATUS_OF_CODE[code] ?? 500,
    errorEnvelope(code),
    headers(retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }),
  );
}

/** Headers as the transport sees them. */
export function headers(values: Record<string, string> = {}): { get(name: string): string | null } {
  const lower = Object.fromEntries(Object.entries(values).map(([k, v]) => [k.toLowerCase(), v]));
  return { get: (name) => lower[name.toLowerCase()] ?? null };
}

/** A job object in `status`, as a server would send it. */
export function job(status: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const id = randomUUID();
  return {
    id,
    status,
    created_at: '2026-11-22T10:00:00Z',
    started_at: status === 'queued' ? null : '2026-11-22T10:00:01Z',
    completed_at: ['succeeded', 'failed', 'canceled', 'expired'].includes(status) ? '2026-11-22T10:00:02Z' : null,
    expires_at: '2026-11-23T10:00:00Z',
    queue_position: status === 'queued' ? 0 : null,
    progress: null,
    outputs: [],
    error: null,
    urls: { self: `/api/v2/jobs/${id}`, events: `/api/v2/jobs/${id}/events`, cancel: `/api/v2/jobs/${id}/cancel` },
    ...overrides,
  };
}

/** The weight-free sample workflow (EmptyImage → ImageInvert → SaveImage), with a varying prefix. */
export function invertWorkflow(
  overrides: { width?: number; color?: number; prefix?: string } = {},
): Record<string, unknown> {
  return {
    '1': {
      class_type: 'EmptyImage',
      inputs: { width: overrides.width ?? 64, height: 64, batch_size: 1, color: overrides.color ?? 16711680 },
    },
    '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
    '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: overrides.prefix ?? 'fixture' } },
  };
}

/** A UI-format export (schema 1: `nodes` and `state`, no `last_node_id`), which the official SDK's check misses. */
export function uiWorkflowSchema1(): Record<string, unknown> {
  return { version: 1, state: { lastNodeId: 2, lastLinkId: 1 }, nodes: [{ id: 1, type: 'EmptyImage' }], links: [] };
}

/** A UI-format export (schema 0.4). */
export function uiWorkflowLegacy(): Record<string, unknown> {
  return {
    last_node_id: 3,
    last_link_id: 2,
    nodes: [{ id: 1, type: 'EmptyImage' }],
    links: [[1, 1, 0, 2, 0, 'IMAGE']],
    version: 0.4,
  };
}

/**
 * A predicate for `assert.throws` / `assert.rejects`: an InputError (a bad input refused before any request) with
 * this code, whose message matches `message` when given.
 */
export function inputError(code: string, message?: RegExp): (err: unknown) => boolean {
  return (err) => {
    assert.ok(InputError.is(err), `not an InputError: ${String(err)}`);
    assert.equal(err.code, code, err.message);
    if (message) assert.match(err.message, message);
    return true;
  };
}
