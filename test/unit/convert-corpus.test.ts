import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ConversionError, convertUiWorkflow, readImageWorkflow } from '../../src/core/convert';
import { assertSameGraph, caseDefinitions, convertFixtures } from './convertBuilders';

interface CaseFile {
  readonly input: string;
  readonly object_info: string;
  readonly expect: 'api' | 'error';
  readonly errors?: readonly { readonly node: string; readonly class: string }[];
}

/**
 * The corpus of real UI-format workflows, each with the API graph ComfyUI's frontend produced from it (or the
 * refusal it must get): test/fixtures/convert/README.md gives each case's source.
 */
describe('UI format to API format: the corpus (the graph the frontend queued for each real workflow)', () => {
  const root = convertFixtures();
  const cases = fs
    .readdirSync(root)
    .filter((d) => fs.existsSync(path.join(root, d, 'case.json')))
    .sort();

  it('the corpus is all there', () => {
    assert.equal(cases.length, 30);
  });

  for (const name of cases) {
    const dir = path.join(root, name);
    const spec = JSON.parse(fs.readFileSync(path.join(dir, 'case.json'), 'utf8')) as CaseFile;
    it(spec.input === 'workflow.json' ? name : `${name} (the workflow chunk of a ComfyUI PNG)`, () => {
      // A PNG case's workflow is its `workflow` text chunk, read by the image reader as `convert image.png` reads it.
      const workflow: unknown =
        spec.input === 'workflow.json'
          ? JSON.parse(fs.readFileSync(path.join(dir, 'workflow.json'), 'utf8'))
          : readImageWorkflow(fs.readFileSync(path.join(dir, spec.input))).workflow;
      assert.ok(workflow !== undefined, `${spec.input} carries no workflow chunk`);
      const definitions = caseDefinitions(spec.object_info);
      if (spec.expect === 'api') {
        const want = JSON.parse(fs.readFileSync(path.join(dir, 'expected.json'), 'utf8')) as Parameters<
          typeof assertSameGraph
        >[1];
        assertSameGraph(convertUiWorkflow(workflow, definitions), want);
        return;
      }
      assert.throws(
        () => convertUiWorkflow(workflow, definitions),
        (err: unknown) => {
          assert.ok(err instanceof ConversionError);
          assert.equal(err.code, 'workflow_not_convertible');
          const listed = err.problems.map((p) => `${p.nodeId} ${p.classType}`);
          for (const e of spec.errors ?? []) {
            assert.ok(listed.includes(`${e.node} ${e.class}`), `${e.node} ${e.class} among ${listed.join(', ')}`);
            assert.match(err.message, new RegExp(`^node ${e.node} \\(${e.class}`, 'm'));
          }
          return true;
        },
      );
    });
  }
});
