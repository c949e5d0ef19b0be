/**
 * Shared by the emulator-faults-*.test.ts suites (the emulator's fault plan): sample workflows, bounded waits on a
 * job's state, an event-stream reader, and an emulator for one suite whose fault plan is emptied after each test.
 */
import { type Emulator, type EmulatorOptions } from '../../src/emulator';
import { call, useEmulator as useBareEmulator, type Json } from './harness';

/** EmptyImage → ImageInvert → SaveImage. */
export function sample(prefix = 'fault'): Json {
  return {
    '1': { class_type: 'EmptyImage', inputs: { width: 8, height: 8, batch_size: 1, color: 16711680 } },
    '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
    '3': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: prefix } },
  };
}

/** EmptyImage 1×1 → `length` ImageInverts → PreviewImage. */
export function chain(length: number): Json {
  const workflow: Json = {
    '0': { class_type: 'EmptyImage', inputs: { width: 1, height: 1, batch_size: 1, color: 0 } },
  };
  for (let i = 1; i <= length; i++)
    workflow[String(i)] = { class_type: 'ImageInvert', inputs: { image: [String(i - 1), 0] } };
  workflow.out = { class_type: 'PreviewImage', inputs: { images: [String(length), 0] } };
  return workflow;
}

export async function until(emu: Emulator, id: string, predicate: (job: Json) => boolean): Promise<Json> {
  for (let i = 0; i < 5000; i++) {
    const { status, body } = await call(`${emu.baseUrl}/api/v2/jobs/${id}`);
    if (status === 200 && predicate(body)) return body;
  }
  throw new Error(`job ${id}: the condition never held`);
}

export async function jobIds(emu: Emulator): Promise<string[]> {
  return (await call(`${emu.baseUrl}/api/v2/jobs?limit=1000`)).body.jobs.map((j: Json) => j.id);
}

export interface SseRead {
  events: { event: string; data: Json }[];
  comments: string[];
  /** How the stream ended: the server ended it, reset it, or the reader stopped. */
  end: 'ended' | 'reset' | 'stopped';
}

/** Reads an event stream until it ends or breaks, or until `stop` holds. */
export async function readStream(res: Response, stop?: (s: SseRead) => boolean): Promise<SseRead> {
  const out: SseRead = { events: [], comments: [], end: 'ended' };
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    let chunk: Awaited<ReturnType<typeof reader.read>>;
    try {
      chunk = await reader.read();
    } catch {
      out.end = 'reset';
      return out;
    }
    if (chunk.done) return out;
    buffer += decoder.decode(chunk.value, { stream: true });
    for (let at = buffer.indexOf('\n\n'); at >= 0; at = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, at).split('\n');
      buffer = buffer.slice(at + 2);
      for (const l of block) if (l.startsWith(':')) out.comments.push(l);
      const event = block.find((l) => l.startsWith('event: '))?.slice(7);
      const data = block.find((l) => l.startsWith('data: '))?.slice(6);
      if (event !== undefined && data !== undefined) out.events.push({ event, data: JSON.parse(data) });
    }
    if (stop?.(out)) {
      out.end = 'stopped';
      await reader.cancel();
      return out;
    }
  }
}

/** Resolves once the emulator's fault log has grown past `length` entries (a fault fired on a request it received). */
export async function faultFired(emu: Emulator, length: number): Promise<void> {
  while (emu.faultLog.length <= length) await new Promise((resolve) => setImmediate(resolve));
}

export function openEvents(url: string): Promise<Response> {
  return fetch(url, { headers: { accept: 'text/event-stream' }, signal: AbortSignal.timeout(15_000) });
}

/** An emulator for one suite whose fault plan is emptied after each test. */
export function useEmulator(options: EmulatorOptions = {}): () => Emulator {
  const emu = useBareEmulator(options);
  afterEach(() => emu()?.setFaults({ rules: [] }));
  return emu;
}
