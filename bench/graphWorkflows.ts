/**
 * Big workflows for the graph's benchmark and preview (scripts/graph-preview.mjs): copies of the corpus's API-format
 * workflows (the `expected.json` of each `ex-` case of test/fixtures/convert: real graphs of real node classes), side
 * by side with their node ids moved apart, until the graph has the nodes asked for.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The repository root, from this file (bench/, or out/bench/ once compiled). */
export function graphRepoRoot(from: string = __dirname): string {
  let dir = from;
  while (!fs.existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  return dir;
}

/** A node id moved apart: an integer id plus `shift`; another id (a path id `"12:5"`) with the shift in front. */
function moved(id: string, shift: number): string {
  return /^\d+$/.test(id) ? String(Number(id) + shift) : `${shift}${id}`;
}

type ApiNode = { class_type: string; inputs: Record<string, unknown>; _meta?: Record<string, unknown> };

/** API-format workflows of the corpus, by case name, in name order. */
export function corpusApiWorkflows(root: string = graphRepoRoot()): Map<string, Record<string, ApiNode>> {
  const dir = path.join(root, 'test', 'fixtures', 'convert');
  const out = new Map<string, Record<string, ApiNode>>();
  for (const name of fs
    .readdirSync(dir)
    .filter((n) => n.startsWith('ex-'))
    .sort()) {
    const file = path.join(dir, name, 'expected.json');
    if (fs.existsSync(file)) out.set(name, JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, ApiNode>);
  }
  return out;
}

/**
 * An API-format workflow of at least `count` nodes (exactly `count`: the last copy is cut, links to cut nodes
 * dropped by the model): copies of the corpus workflows, each copy's ids shifted by 1000 × its number
 * (so a copy has at most 1000 nodes of integer ids).
 */
export function bigApiWorkflow(count: number, root?: string): Record<string, ApiNode> {
  const sources = [...corpusApiWorkflows(root).values()];
  const out: Record<string, ApiNode> = {};
  let n = 0;
  for (let copy = 0; n < count; copy++) {
    const source = sources[copy % sources.length]!;
    const shift = (copy + 1) * 1000;
    for (const [id, node] of Object.entries(source)) {
      if (n >= count) break;
      const inputs: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(node.inputs))
        inputs[k] =
          Array.isArray(v) && v.length === 2 && typeof v[1] === 'number' ? [moved(String(v[0]), shift), v[1]] : v;
      out[moved(id, shift)] = { ...node, inputs };
      n++;
    }
  }
  return out;
}
