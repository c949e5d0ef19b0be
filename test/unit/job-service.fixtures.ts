/**
 * Shared by the job-service-*.test.ts suites: a job service over settings a test changes (a harness connection), and
 * waits on what it publishes (a state change, the streams the emulator holds for a job, an abort).
 */
import * as assert from 'node:assert/strict';
import { AbortError, InputError, JobService, type Clock, type JobServiceOptions, type JobState } from '../../src/core';
import { StateStore } from '../../src/core/state';
import { V2Client } from '../../src/core/v2/client';
import { V2JobBackend } from '../../src/core/v2/jobBackend';
import { type Emulator } from '../../src/emulator';
import { tempDir } from './tmp';

/** What a test changes to reconfigure the service: the settings that make a client. */
export interface Settings {
  baseUrl: string;
  apiKey?: string;
  clock?: Clock;
  maxStreams?: number;
}

/** A connection of the harness: a v2 job backend, and its client (to count its requests and closes). */
export interface HarnessConnection {
  backend: V2JobBackend;
  client: V2Client;
}

/** A service whose connections follow `settings`, with every client, close and request (`http.send`) recorded. */
export function harnessService(settings: Settings, options: Partial<JobServiceOptions<HarnessConnection>> = {}) {
  const created: V2Client[] = [];
  const closed: V2Client[] = [];
  const sends: { client: V2Client; target: string }[] = [];
  const lines: string[] = [];
  const store = options.store ?? new StateStore(tempDir('cc-jobservice-'));
  const service = new JobService<HarnessConnection>({
    clients: {
      identity: async () => {
        if (settings.baseUrl === 'not a url')
          throw new InputError('bad_base_url', 'Setting comfyCloud.baseUrl: not a URL');
        return JSON.stringify([settings.baseUrl, settings.apiKey]);
      },
      create: async () => {
        const client = new V2Client({
          baseUrl: settings.baseUrl,
          apiKey: settings.apiKey,
          clock: settings.clock,
          maxStreams: settings.maxStreams,
        });
        const send = client.http.send.bind(client.http);
        client.http.send = (method, target, opts) => {
          sends.push({ client, target: String(target) });
          return send(method, target, opts);
        };
        const close = client.close.bind(client);
        client.close = () => {
          closed.push(client);
          return close();
        };
        created.push(client);
        return { backend: new V2JobBackend(client), client };
      },
    },
    store,
    log: { info: (c, m) => lines.push(`info [${c}] ${m}`), warn: (c, m) => lines.push(`warn [${c}] ${m}`) },
    clientName: 'vscode',
    ...options,
  });
  return { service, store, created, closed, sends, lines };
}

/** The GET requests of job `id`'s event stream that the emulator received. */
export function streamsOf(emu: Emulator, id: string): number {
  return emu.requests.filter((r) => r.method === 'GET' && r.path === `/api/v2/jobs/${id}/events`).length;
}

/** Resolves with the first change that `predicate` accepts. */
export function changeWhere(
  service: JobService<HarnessConnection>,
  predicate: (c: JobState) => boolean,
): Promise<JobState> {
  return new Promise((resolve) => {
    const sub = service.onDidChangeJob((c) => {
      if (!predicate(c)) return;
      sub.dispose();
      resolve(c);
    });
  });
}

export async function rejectsWithAbort(promise: Promise<unknown>): Promise<void> {
  await assert.rejects(promise, (err: unknown) => AbortError.is(err));
}
