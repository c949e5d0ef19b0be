/**
 * The UI-format to API-format conversion (`convertUiWorkflow`) of a 500-node UI workflow, built from corpus
 * workflows (test/fixtures/convert: the ex-lora_multiple reroute, bypass and subgraph variants, the SDXL example with
 * its PrimitiveNodes, the hires-fix example), copied side by side with their ids and links moved apart. Goal: at
 * most 50 ms. Reference, side by side: `JSON.parse` of the same file. The node definitions are read once, before
 * (`parseObjectInfo`, reported apart): a caller reads them once for many workflows.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { convertUiWorkflow } from '../src/core/convert';
import { parseObjectInfo } from '../src/core/workflowSchema';
import { row } from './util';

const ROOT = path.join(__dirname, '..', '..');
const CASES = [
  'der-reroute-lora_multiple',
  'der-bypass-lora_multiple',
  'der-subgraph-lora_multiple',
  'ex-sdxl_simple_example',
  'ex-hiresfix_latent_workflow',
];

type Json = Record<string, unknown>;

/** Copies of the cases' workflows, ids and link ids shifted apart, until the graph has at least `count` nodes. */
function bigWorkflow(count: number): Json {
  const sources = CASES.map(
    (c) =>
      JSON.parse(fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'convert', c, 'workflow.json'), 'utf8')) as Json,
  );
  const nodes: Json[] = [];
  const links: unknown[][] = [];
  const subgraphs = new Map<string, unknown>();
  for (let copy = 0; nodes.length < count; copy++) {
    const source = structuredClone(sources[copy % sources.length]!);
    const shift = (copy + 1) * 1000;
    for (const node of source.nodes as Json[]) {
      node.id = (node.id as number) + shift;
      for (const input of (node.inputs as Json[] | undefined) ?? [])
        if (typeof input.link === 'number') input.link += shift;
      for (const output of (node.outputs as Json[] | undefined) ?? [])
        if (Array.isArray(output.links)) output.links = output.links.map((l: number) => l + shift);
      nodes.push(node);
    }
    for (const link of source.links as number[][])
      links.push([link[0]! + shift, link[1]! + shift, link[2]!, link[3]! + shift, link[4]!, link[5]!]);
    for (const s of ((source.definitions as Json | undefined)?.subgraphs as Json[] | undefined) ?? [])
      subgraphs.set(s.id as string, s);
  }
  return { version: 0.4, nodes, links, definitions: { subgraphs: [...subgraphs.values()] } };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Prints the conversion's median time over `runs` runs, beside `JSON.parse` of the same file, and their ratio. */
export function benchConvert(runs = 21): void {
  const rawInfo = fs.readFileSync(
    path.join(ROOT, 'test', 'fixtures', 'object_info', 'comfy-ts-object_info.json'),
    'utf8',
  );
  let t = process.hrtime.bigint();
  const definitions = parseObjectInfo(JSON.parse(rawInfo));
  const definitionsMs = Number(process.hrtime.bigint() - t) / 1e6;
  const text = JSON.stringify(bigWorkflow(500));
  const workflow: unknown = JSON.parse(text);
  const nodes = (workflow as { nodes: unknown[] }).nodes.length;
  const apiNodes = Object.keys(convertUiWorkflow(workflow, definitions)).length; // warm-up, and the size
  const ours: number[] = [];
  const reference: number[] = [];
  for (let i = 0; i < runs; i++) {
    t = process.hrtime.bigint();
    JSON.parse(text);
    reference.push(Number(process.hrtime.bigint() - t) / 1e6);
    t = process.hrtime.bigint();
    convertUiWorkflow(workflow, definitions); // the conversion reads its input, never changes it
    ours.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  row('convert 500-node UI workflow', {
    uiNodes: nodes,
    apiNodes,
    bytes: text.length,
    convertMs: median(ours),
    jsonParseMs: median(reference),
    ratio: median(ours) / median(reference),
    goal: '<= 50 ms',
    definitionsMs,
  });
}
