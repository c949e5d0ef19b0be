import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ApiWorkflow } from '../../src/core/util/workflow';
import { parseObjectInfo, type NodeDefinitions } from '../../src/core/workflowSchema';
import { repositoryRoot } from './repositoryRoot';

/** The conversion corpus: `test/fixtures/convert/<case>/`. */
export function convertFixtures(): string {
  return path.join(repositoryRoot(), 'test', 'fixtures', 'convert');
}

const cache = new Map<string, NodeDefinitions>();

/**
 * The node definitions a case names (its `case.json`'s `object_info` file name): `comfy-ts.json` is the recorded
 * engine of `test/fixtures/object_info/`, `comfy-ts+<engine>.json` is that engine with the classes of
 * `object_info/comfy-ts+<engine>.overlay.json` replaced or added (only the overlay is kept in the repository).
 */
export function caseDefinitions(objectInfo: string): NodeDefinitions {
  const name = path.basename(objectInfo);
  const known = cache.get(name);
  if (known) return known;
  const base = JSON.parse(
    fs.readFileSync(
      path.join(repositoryRoot(), 'test', 'fixtures', 'object_info', 'comfy-ts-object_info.json'),
      'utf8',
    ),
  ) as Record<string, unknown>;
  let raw = base;
  if (name !== 'comfy-ts.json') {
    const overlay = path.join(convertFixtures(), 'object_info', name.replace(/\.json$/, '.overlay.json'));
    raw = { ...base, ...(JSON.parse(fs.readFileSync(overlay, 'utf8')) as Record<string, unknown>) };
  }
  const definitions = parseObjectInfo(raw);
  cache.set(name, definitions);
  return definitions;
}

/** The recorded engine alone (`comfy-ts.json`). */
export function recordedDefinitions(): NodeDefinitions {
  return caseDefinitions('comfy-ts.json');
}

function sameValue(got: unknown, want: unknown): boolean {
  if (Array.isArray(want) && want.length === 2 && typeof want[0] === 'string' && typeof want[1] === 'number') {
    return Array.isArray(got) && got.length === 2 && String(got[0]) === want[0] && Number(got[1]) === want[1];
  }
  if (typeof want === 'number') return typeof got === 'number' && got === want;
  return JSON.stringify(got) === JSON.stringify(want);
}

/**
 * Asserts `got` is the API graph `want` as the corpus compares them: the same node ids, and per node the same
 * `class_type` and inputs (links as `[id, index]`, numbers numerically, everything else exactly); `_meta` ignored.
 */
export function assertSameGraph(
  got: ApiWorkflow,
  want: Record<string, { class_type: string; inputs: Record<string, unknown> }>,
): void {
  assert.deepEqual(Object.keys(got).sort(), Object.keys(want).sort(), 'node ids');
  const diffs: string[] = [];
  for (const [id, node] of Object.entries(want)) {
    const mine = got[id]!;
    if (mine.class_type !== node.class_type)
      diffs.push(`node ${id}: class_type ${mine.class_type}, want ${node.class_type}`);
    for (const name of new Set([...Object.keys(node.inputs), ...Object.keys(mine.inputs)])) {
      if (!sameValue(mine.inputs[name], node.inputs[name])) {
        diffs.push(
          `node ${id}.${name}: ${JSON.stringify(mine.inputs[name])}, want ${JSON.stringify(node.inputs[name])}`,
        );
      }
    }
  }
  assert.deepEqual(diffs, []);
}
