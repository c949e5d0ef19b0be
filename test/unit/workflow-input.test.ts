/**
 * A workflow input file as `convert` and `submit` read it (src/core/convert/input.ts): a PNG by its signature, read
 * whole within its own bound (256 MiB), anything else as a JSON file within a workflow file's (16 MiB); both bounds
 * checked before the file is read past its first bytes.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { MAX_IMAGE_BYTES } from '../../src/core/convert/image';
import { readWorkflowInput } from '../../src/core/convert/input';
import { MAX_WORKFLOW_BYTES } from '../../src/core/util/inputFile';
import { invertWorkflow, uiWorkflowSchema1, inputError } from './builders';
import { pngWith, tEXt } from './pngBuilders';
import { fileWriter } from './tmp';

describe('readWorkflowInput: a workflow JSON file or a PNG that carries its workflow', () => {
  const write = fileWriter('cc-workflow-input-');

  it('a JSON file: its text as it is, the parsed workflow without a top-level $schema, and its format', async () => {
    const text = JSON.stringify({ $schema: 'comfy-workflow:/schema.json', ...invertWorkflow() });
    assert.deepEqual(await readWorkflowInput(write('api.json', text)), {
      kind: 'json',
      text,
      workflow: invertWorkflow(),
      format: 'api',
    });
    const ui = await readWorkflowInput(write('ui.json', JSON.stringify(uiWorkflowSchema1())));
    assert.equal(ui.kind === 'json' && ui.format, 'ui');
  });

  it('a PNG (by its signature, whatever its name): its workflows; its errors name the file', async () => {
    const prompt = invertWorkflow();
    assert.deepEqual(await readWorkflowInput(write('image.json', pngWith(tEXt('prompt', JSON.stringify(prompt))))), {
      kind: 'image',
      image: { prompt },
    });
    await assert.rejects(
      readWorkflowInput(write('plain.png', pngWith())),
      inputError('png_no_workflow', /^plain\.png: this image carries no workflow/),
    );
  });

  it('rule: a PNG is bounded by 256 MiB, not by the 16 MiB of a workflow file: 17 MiB of image is read', async () => {
    const prompt = invertWorkflow();
    // Bytes after IEND are not part of any chunk: the image stays valid at any size.
    const big = Buffer.concat([
      pngWith(tEXt('prompt', JSON.stringify(prompt))),
      Buffer.alloc(MAX_WORKFLOW_BYTES + 1024 * 1024),
    ]);
    assert.deepEqual(await readWorkflowInput(write('big.png', big)), { kind: 'image', image: { prompt } });
  });

  it('rule: a PNG over 256 MiB and a JSON file over 16 MiB are refused from their size (too_large naming the bound), not read', async () => {
    assert.equal(MAX_IMAGE_BYTES, 256 * 1024 * 1024);
    // Sparse files: the size is declared, the bytes are never written (nor read: the refusal comes first).
    const huge = write('huge.png', pngWith());
    fs.truncateSync(huge, MAX_IMAGE_BYTES + 1);
    await assert.rejects(
      readWorkflowInput(huge),
      inputError('too_large', /above the bound of 256 MiB \(268435456 bytes\)/),
    );
    const json = write('huge.json', '{"1": ');
    fs.truncateSync(json, MAX_WORKFLOW_BYTES + 1);
    await assert.rejects(
      readWorkflowInput(json),
      inputError('too_large', /above the bound of 16 MiB \(16777216 bytes\)/),
    );
  });

  it('not JSON: bad_json naming the file; not UTF-8: not_utf8', async () => {
    await assert.rejects(
      readWorkflowInput(write('broken.json', '{"1": ')),
      inputError('bad_json', /^broken\.json is not valid JSON/),
    );
    await assert.rejects(
      readWorkflowInput(write('latin1.json', Buffer.from('{"a": "caf\xe9"}', 'latin1'))),
      inputError('not_utf8'),
    );
  });
});
