/**
 * The event pipeline (SSE parse + JSON + zod validation, readJobEvents) in events per second, against
 * eventsource-parser alone on the same bytes, side by side in one run.
 */
import { Readable } from 'node:stream';
import { createParser } from 'eventsource-parser';
import { readJobEvents } from '../src/core/v2/events';
import { row, timed } from './util';

function frames(count: number): Buffer[] {
  const chunks: Buffer[] = [];
  let text = '';
  for (let i = 0; i < count; i++) {
    const value = i / count;
    text +=
      i % 10 === 0
        ? `event: status\ndata: {"status":"running","queue_position":null}\n\n`
        : `event: progress\ndata: {"value":${value},"nodes_done":${i % 7},"nodes_total":7,"current_node":"${i % 7}","current_node_class":"KSampler","step":${i % 50},"steps":50,"message":"KSampler ${i % 50}/50"}\n\n`;
    if (text.length > 16_384) {
      chunks.push(Buffer.from(text));
      text = '';
    }
  }
  chunks.push(Buffer.from(text));
  return chunks;
}

export async function benchEvents(count: number): Promise<void> {
  const chunks = frames(count);
  const parserOnly = await timed(async () => {
    let n = 0;
    const parser = createParser({ onEvent: () => n++ });
    const decoder = new TextDecoder();
    for (const c of chunks) parser.feed(decoder.decode(c, { stream: true }));
    return n;
  });
  const ours = await timed(async () => {
    let n = 0;
    for await (const _ of readJobEvents(Readable.from(chunks))) n++;
    return n;
  });
  if (ours.value !== parserOnly.value) throw new Error(`event counts differ: ${ours.value} vs ${parserOnly.value}`);
  row(`events ${count}`, {
    ours_ev_s: count / (ours.ms / 1000),
    parser_only_ev_s: count / (parserOnly.ms / 1000),
    ratio_time: ours.ms / parserOnly.ms,
  });
}
