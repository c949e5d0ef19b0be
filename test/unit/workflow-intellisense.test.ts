// Workflow IntelliSense's vscode-free parts in the extension (and the same validation before submit): where node
// definitions come from and how they are fetched and cached
// (src/extension/nodeDefinitions.ts), which documents get diagnostics, where they and the `$schema` member go, and
// the check before submit (src/extension/workflow/workflowChecks.ts).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ApiError, ResponseTooLargeError } from '../../src/core';
import { untranslated } from '../../src/core/util';
import { parseObjectInfo, type NodeDefinitions } from '../../src/core/workflowSchema';
import {
  NodeDefinitionsCache,
  httpObjectInfoFetch,
  nodeDefinitionSource,
  type NodeDefinitionSource,
} from '../../src/core/workflowSchema';
import {
  WORKFLOW_SCHEMA_URI,
  diagnosticSpans,
  parseJsonText,
  problemsBeforeSubmit,
  schemaInsertion,
  usesWorkflowSchema,
} from '../../src/extension/workflow/workflowChecks';
import { checkWorkflow } from '../../src/core/workflowSchema';
import { invertWorkflow } from './builders';
import { startServer, type TestServer } from './httpServer';
import { useEmulator } from './harness';
import { tempDir } from './tmp';
import { repositoryRoot } from './repositoryRoot';
import { emulatorObjectInfo } from './workflowSchemaBuilders';

const emulatorDefs: NodeDefinitions = parseObjectInfo(emulatorObjectInfo());
const KEY = 'test-key-wf-1';

describe('node definitions: source, fetch and cache', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('comfyCloud.nodeDefinitionsUrl, when set, is the source (a local engine); else the active connection', () => {
    const connection = { name: 'Cloud', baseUrl: 'https://cloud.example/' };
    assert.deepEqual(nodeDefinitionSource('  http://127.0.0.1:8188/  ', connection), {
      kind: 'engine',
      url: 'http://127.0.0.1:8188',
      label: 'http://127.0.0.1:8188',
    });
    assert.deepEqual(nodeDefinitionSource('', connection), {
      kind: 'connection',
      url: 'https://cloud.example',
      label: 'Cloud',
    });
    assert.deepEqual(nodeDefinitionSource(undefined, connection), {
      kind: 'connection',
      url: 'https://cloud.example',
      label: 'Cloud',
    });
    assert.throws(() => nodeDefinitionSource('file:///etc/passwd', connection), /not an http\(s\) URL/);
    assert.throws(() => nodeDefinitionSource('not a url', connection), /not a URL/);
  });

  it("the connection's request carries X-API-Key and no Authorization header", async () => {
    server = await startServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    await httpObjectInfoFetch({ source: { kind: 'connection', url: server.origin, label: 's' }, apiKey: KEY })(
      AbortSignal.timeout(10_000),
    );
    assert.equal(server.seen.length, 1);
    assert.equal(server.seen[0]!.url, '/api/object_info');
    assert.equal(server.seen[0]!.headers['x-api-key'], KEY);
    assert.equal(server.seen[0]!.headers.authorization, undefined);
  });

  it('a local engine is asked GET /object_info, then /api/object_info where that answers 404, and never gets a key', async () => {
    server = await startServer((req, res) => {
      if (req.url === '/object_info') res.writeHead(404).end('not here');
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(emulatorObjectInfo()));
    });
    const raw = await httpObjectInfoFetch({
      source: { kind: 'engine', url: server.origin, label: server.origin },
      apiKey: KEY,
    })(AbortSignal.timeout(10_000));
    assert.ok(parseObjectInfo(raw).classes.has('EmptyImage'));
    assert.deepEqual(
      server.seen.map((s) => s.url),
      ['/object_info', '/api/object_info'],
    );
    assert.ok(server.seen.every((s) => s.headers['x-api-key'] === undefined && s.headers.authorization === undefined));
  });

  it('a local engine that serves /object_info is asked once; another error status is not retried on /api', async () => {
    server = await startServer((req, res) =>
      req.url === '/object_info' ? res.writeHead(500).end('boom') : res.writeHead(200).end('{}'),
    );
    await assert.rejects(
      httpObjectInfoFetch({ source: { kind: 'engine', url: server.origin, label: 'e' } })(AbortSignal.timeout(10_000)),
      (err: unknown) => err instanceof ApiError && err.status === 500,
    );
    assert.deepEqual(
      server.seen.map((s) => s.url),
      ['/object_info'],
    );
  });

  it('object_info is read with a size cap: a larger body is ResponseTooLargeError', async () => {
    server = await startServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ pad: 'x'.repeat(5000) })),
    );
    await assert.rejects(
      httpObjectInfoFetch({ source: { kind: 'engine', url: server.origin, label: 'e' }, maxBytes: 1000 })(
        AbortSignal.timeout(10_000),
      ),
      (err: unknown) => err instanceof ResponseTooLargeError,
    );
  });

  it("the cache keeps one file per source, written atomically; a corrupt file or another source's is a miss", async () => {
    const dir = tempDir('nodedefs-');
    const cache = new NodeDefinitionsCache(dir);
    const a: NodeDefinitionSource = { kind: 'connection', url: 'http://127.0.0.1:1', label: 'A' };
    const b: NodeDefinitionSource = { kind: 'engine', url: 'http://127.0.0.1:1', label: 'B' };
    assert.equal(await cache.load(a), undefined);
    await cache.save(a, { EmptyImage: { input: {} } }, 1234);
    assert.notEqual(cache.fileOf(a), cache.fileOf(b));
    assert.deepEqual(await cache.load(a), { source: a, fetchedAt: 1234, objectInfo: { EmptyImage: { input: {} } } });
    assert.equal(await cache.load(b), undefined);
    // No temporary file is left beside it.
    assert.deepEqual(fs.readdirSync(dir), [path.basename(cache.fileOf(a))]);
    // A file copied from another source's place is not taken for this one.
    fs.copyFileSync(cache.fileOf(a), cache.fileOf(b));
    assert.equal(await cache.load(b), undefined);
    fs.writeFileSync(cache.fileOf(a), '{"source": ');
    assert.equal(await cache.load(a), undefined);
  });
});

describe("node definitions from the emulator (the connection's object_info over the v1 surface)", () => {
  const emulator = useEmulator({ tokens: [KEY] });

  it('the connection is asked GET /api/object_info with its key as X-API-Key, never Authorization (the emulator refuses a bearer on v1)', async () => {
    const emu = emulator();
    const source: NodeDefinitionSource = { kind: 'connection', url: emu.baseUrl, label: 'emu' };
    const raw = await httpObjectInfoFetch({ source, apiKey: KEY })(AbortSignal.timeout(10_000));
    const defs = parseObjectInfo(raw);
    assert.ok(defs.classes.has('EmptyImage') && defs.classes.has('SaveImage'), [...defs.classes.keys()].join(','));
    // A wrong key is the server's 401, typed.
    await assert.rejects(
      httpObjectInfoFetch({ source, apiKey: 'wrong' })(AbortSignal.timeout(10_000)),
      (err: unknown) => err instanceof ApiError && err.status === 401,
    );
  });
});

describe('workflow documents in the editor (the schema applies to *.api.json and to files with its $schema, never to all JSON)', () => {
  const text = (value: unknown): string => JSON.stringify(value, null, 2);

  it('package.json applies the schema to *.api.json through jsonValidation, with a URL VS Code accepts (scheme://, not scheme:/)', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '../../../package.json'), 'utf8')) as {
      contributes: { jsonValidation: { fileMatch: string; url: string }[] };
    };
    // The workflow schema for *.api.json only; the one other schema is the batch file's, for *.batch.json only.
    assert.deepEqual(manifest.contributes.jsonValidation, [
      { fileMatch: '*.api.json', url: WORKFLOW_SCHEMA_URI },
      { fileMatch: '*.batch.json', url: './schemas/batch.schema.json' },
    ]);
    // VS Code's jsonValidation extension point refuses (with an error on the extension) a URL that is neither
    // './…' nor absolute in this sense.
    assert.match(WORKFLOW_SCHEMA_URI, /^[^:/?#]+:\/\//);
  });

  it('diagnostics apply to an API-format *.api.json, or an API-format file whose $schema is the workflow schema, and to nothing else', () => {
    const wf = invertWorkflow();
    assert.equal(usesWorkflowSchema('/w/a.api.json', wf), true);
    assert.equal(usesWorkflowSchema('/w/a.json', wf), false);
    assert.equal(usesWorkflowSchema('/w/a.json', { $schema: WORKFLOW_SCHEMA_URI, ...wf }), true);
    assert.equal(usesWorkflowSchema('/w/a.json', { $schema: 'https://json.schemastore.org/package', ...wf }), false);
    assert.equal(usesWorkflowSchema('/w/package.api.json', { name: 'x', version: '1' }), false);
    assert.equal(usesWorkflowSchema('/w/ui.api.json', { nodes: [], links: [] }), false);
  });

  it('the $schema code action inserts "$schema" as the first member, with the first member\'s indentation', () => {
    const source = text(invertWorkflow());
    const insertion = schemaInsertion(source)!;
    const edited = source.slice(0, insertion.offset) + insertion.text + source.slice(insertion.offset);
    assert.ok(edited.startsWith(`{\n  "$schema": "${WORKFLOW_SCHEMA_URI}",\n  "1": {`), edited.slice(0, 80));
    assert.equal((JSON.parse(edited) as { $schema?: unknown }).$schema, WORKFLOW_SCHEMA_URI);
    // One line: a space, still valid JSON.
    const flat = JSON.stringify(invertWorkflow());
    const i = schemaInsertion(flat)!;
    assert.deepEqual(JSON.parse(flat.slice(0, i.offset) + i.text + flat.slice(i.offset)), {
      $schema: WORKFLOW_SCHEMA_URI,
      ...invertWorkflow(),
    });
  });

  it('the $schema code action is offered only for API-format JSON without a top-level $schema', () => {
    assert.equal(schemaInsertion(text({ $schema: 'x', ...invertWorkflow() })), undefined);
    assert.equal(schemaInsertion(text({ name: 'pkg', version: '1.0.0' })), undefined);
    assert.equal(schemaInsertion(text({ nodes: [{ id: 1 }], links: [] })), undefined);
    assert.equal(schemaInsertion('[1, 2]'), undefined);
    assert.equal(schemaInsertion('{}'), undefined);
  });

  it('a link-type mismatch is placed on the link in the text (the jsonc-parser node of its path)', () => {
    // EmptyImage's IMAGE output linked into ImageScale's INT width.
    const wf = {
      '1': { class_type: 'EmptyImage', inputs: { width: 64, height: 64, batch_size: 1, color: 0 } },
      '2': {
        class_type: 'ImageScale',
        inputs: { image: ['1', 0], upscale_method: 'nearest-exact', width: ['1', 0], height: 64, crop: 'disabled' },
      },
      '3': { class_type: 'SaveImage', inputs: { images: ['2', 0] } },
    };
    const source = text(wf);
    const check = checkWorkflow(parseJsonText(source), emulatorDefs, untranslated, { scope: 'beyondSchema' });
    assert.equal(check.status, 'checked');
    const mismatch = check.diagnostics.filter((d) => d.code === 'return_type_mismatch');
    assert.equal(mismatch.length, 1, JSON.stringify(check.diagnostics));
    const [span] = diagnosticSpans(source, mismatch);
    const line = source.slice(0, span!.offset).split('\n').length - 1;
    assert.match(
      source.split('\n')[line]!,
      /^\s*"width": \[$|^\s*"1",?$|^\s*0$/,
      `line ${line}: ${source.split('\n')[line]}`,
    );
    const widthLine = source
      .split('\n')
      .findIndex(
        (l, n) => n > source.split('\n').findIndex((x) => /"class_type": "ImageScale"/.test(x)) && /"width"/.test(l),
      );
    assert.ok(
      line >= widthLine && line <= widthLine + 3,
      `the span is on line ${line}, the width link starts on line ${widthLine}`,
    );
  });

  it('a graph-level problem (no output node) is placed on the first character only, and a path that is missing falls back to its nearest existing parent (an object shown by its key)', () => {
    const source = text({ '1': { class_type: 'EmptyImage', inputs: {} } });
    assert.deepEqual(diagnosticSpans(source, [{ code: 'prompt_no_outputs', message: 'm', path: [] }]), [
      { offset: 0, length: 1 },
    ]);
    const [span] = diagnosticSpans(source, [
      { code: 'required_input_missing', message: 'm', path: ['1', 'inputs', 'width'] },
    ]);
    assert.equal(source.slice(span!.offset, span!.offset + span!.length), '"inputs"');
    // A node (an object) is shown by its key, not its whole body.
    const [node] = diagnosticSpans(source, [{ code: 'missing_node_type', message: 'm', path: ['1'] }]);
    assert.equal(source.slice(node!.offset, node!.offset + node!.length), '"1"');
  });
});

describe('the check before submit (the same validation runs before submit, in the words the server would use)', () => {
  it("a workflow with problems is refused with the server's words, its node errors in the shape of a 422 invalid_workflow", () => {
    const wf = invertWorkflow() as Record<string, { inputs: Record<string, unknown> }>;
    wf['2']!.inputs.image = ['9', 0];
    const refused = problemsBeforeSubmit(wf, emulatorDefs, untranslated)!;
    assert.ok(refused);
    assert.match(refused.message, /^invalid workflow: node 2 input image: /);
    assert.equal(refused.error.code, 'invalid_workflow');
    assert.equal(refused.error.status, 422);
    assert.deepEqual(
      refused.error.nodeErrors.map((n) => [n.nodeId, n.field]),
      [['2', 'image']],
    );
  });

  it("a workflow of classes the server does not run: one sentence naming each class once (the emulator's words on the emulator), not a reason per node", () => {
    const sd = JSON.parse(
      fs.readFileSync(path.join(repositoryRoot(), 'test', 'fixtures', 'workspace', 'stable-diffusion.json'), 'utf8'),
    ) as unknown;
    const classes = 'KSampler, CheckpointLoaderSimple, EmptyLatentImage, CLIPTextEncode, VAEDecode';
    const onEmulator = problemsBeforeSubmit(sd, emulatorDefs, untranslated, { emulator: true })!;
    assert.equal(
      onEmulator.message,
      `the local emulator runs only its demo nodes (${[...emulatorDefs.classes.keys()].join(', ')}), not ${classes}; use a cloud connection for this workflow`,
    );
    assert.deepEqual(onEmulator.error.unknownClasses, classes.split(', '));
    assert.equal(onEmulator.error.nodeErrors.length, 6, 'each node keeps its problem (Problems panel)');
    const elsewhere = problemsBeforeSubmit(sd, emulatorDefs, untranslated)!;
    assert.equal(
      elsewhere.message,
      `the server does not run the node classes ${classes} that this workflow uses; use a connection that runs them`,
    );
  });

  it('a graph-level problem (no output node) is kept as a node error of no node (shown at the start of the file)', () => {
    const wf = invertWorkflow();
    delete wf['3'];
    const refused = problemsBeforeSubmit(wf, emulatorDefs, untranslated)!;
    assert.ok(
      refused.error.nodeErrors.some((n) => n.nodeId === ''),
      JSON.stringify(refused.error.nodeErrors),
    );
  });

  it('every rule runs before submit, those the schema states too (a value above max)', () => {
    const refused = problemsBeforeSubmit(invertWorkflow({ width: 10_000_000 }), emulatorDefs, untranslated);
    assert.ok(refused, 'a width above the maximum was let through');
    assert.match(refused.message, /node 1 input width/);
  });

  it('without node definitions (or for a valid workflow) nothing is refused', () => {
    assert.equal(problemsBeforeSubmit(invertWorkflow(), undefined, untranslated), undefined);
    assert.equal(problemsBeforeSubmit(invertWorkflow(), { classes: new Map(), skipped: 0 }, untranslated), undefined);
    assert.equal(problemsBeforeSubmit(invertWorkflow(), emulatorDefs, untranslated), undefined);
    assert.equal(
      problemsBeforeSubmit({ $schema: WORKFLOW_SCHEMA_URI, ...invertWorkflow() }, emulatorDefs, untranslated),
      undefined,
    );
  });
});
