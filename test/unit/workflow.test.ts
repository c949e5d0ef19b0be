import * as assert from 'node:assert/strict';
import { InputError } from '../../src/core';
import {
  assertApiWorkflow,
  detectWorkflowFormat,
  isLink,
  prefixOfOutputName,
  saveImagePrefix,
  withoutSchemaKey,
} from '../../src/core/util';
import { resolveLink, normalizeBaseUrl } from '../../src/core/http';
import { surfaceFromBaseUrl } from '../../src/core/v2/surface';
import { invertWorkflow, uiWorkflowLegacy, uiWorkflowSchema1 } from './builders';
import { tempDir } from './tmp';

describe('workflow formats (Job and Asset API v2, POST /api/v2/jobs, rule 2: a top-level nodes array is UI format)', () => {
  it('an API-format graph is api, with or without _meta', () => {
    assert.equal(detectWorkflowFormat(invertWorkflow()), 'api');
    const wf = invertWorkflow() as Record<string, { _meta?: unknown }>;
    wf['1']._meta = { title: 'x' };
    assert.equal(detectWorkflowFormat(wf), 'api');
  });
  it('a UI export of schema 0.4 and of schema 1 (which the official SDK misses) is ui', () => {
    assert.equal(detectWorkflowFormat(uiWorkflowLegacy()), 'ui');
    assert.equal(detectWorkflowFormat(uiWorkflowSchema1()), 'ui');
  });
  it('anything else is unknown', () => {
    for (const v of [
      null,
      [],
      'x',
      3,
      {},
      { a: 1 },
      { '1': { class_type: 'X' } },
      { '1': { class_type: 3, inputs: {} } },
    ]) {
      assert.equal(detectWorkflowFormat(v), 'unknown', JSON.stringify(v));
    }
  });
  it("assertApiWorkflow refuses UI format with the server's code workflow_format_ui and tells how to export", () => {
    assert.throws(
      () => assertApiWorkflow(uiWorkflowSchema1()),
      (e: unknown) => InputError.is(e) && e.code === 'workflow_format_ui' && /Export \(API\)/.test(e.message),
    );
    assert.throws(
      () => assertApiWorkflow({ a: 1 }),
      (e: unknown) => InputError.is(e) && e.code === 'not_api_format',
    );
  });
  it('links are [node id, output index]', () => {
    assert.ok(isLink(['1', 0]));
    assert.ok(!isLink(['1', 0.5]));
    assert.ok(!isLink(['1']));
  });
});

describe("a job's name from its workflow (its file name, else its SaveImage prefix)", () => {
  it('saveImagePrefix is the filename_prefix of the first SaveImage by node id (numeric order), trimmed; none without one', () => {
    const wf = {
      '10': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: 'second' } },
      '9': { class_type: 'SaveImage', inputs: { images: ['2', 0], filename_prefix: '  first ' } },
      '2': { class_type: 'ImageInvert', inputs: { image: ['1', 0] } },
    };
    assert.equal(saveImagePrefix(wf), 'first');
    assert.equal(saveImagePrefix(invertWorkflow({ prefix: 'invert' })), 'invert');
    assert.equal(saveImagePrefix({ '1': { class_type: 'SaveImage', inputs: { filename_prefix: '' } } }), undefined);
    assert.equal(saveImagePrefix({ '1': { class_type: 'PreviewImage', inputs: {} } }), undefined);
    assert.equal(saveImagePrefix([]), undefined);
  });

  it('prefixOfOutputName reads <prefix>_<counter>_.<ext>, and nothing else', () => {
    assert.equal(prefixOfOutputName('invert_00001_.png'), 'invert');
    assert.equal(prefixOfOutputName('my_render_00012.webp'), 'my_render');
    assert.equal(prefixOfOutputName('photo.png'), undefined);
    assert.equal(prefixOfOutputName(null), undefined);
  });
});

describe('link resolution (Job urls: host-relative links resolve against the request origin)', () => {
  it('a host-relative link keeps its own mount prefix and resolves against the request origin, not the base URL', () => {
    const url = resolveLink('/deployment/d1/api/v2/jobs/7', 'http://127.0.0.1:9000/deployment/d1/api/v2/jobs');
    assert.equal(url.href, 'http://127.0.0.1:9000/deployment/d1/api/v2/jobs/7');
  });
  it('an absolute link is taken as is, even on another origin', () => {
    assert.equal(
      resolveLink('https://cdn.example/x?sig=1', 'http://127.0.0.1:9000/a').href,
      'https://cdn.example/x?sig=1',
    );
  });
  it("a link is resolved against the origin of the request that returned it, even when that is not the base URL's", () => {
    assert.equal(
      resolveLink('/api/v2/jobs/1', 'http://other.host:81/deep/path/').href,
      'http://other.host:81/api/v2/jobs/1',
    );
  });
  it('refuses an empty or non-http link', () => {
    assert.throws(() => resolveLink('', 'http://a/'));
    assert.throws(() => resolveLink('javascript:alert(1)', 'http://a/'));
  });
});

describe('surfaces and base URLs', () => {
  it('a base URL may carry a path prefix; trailing slashes go', () => {
    assert.equal(normalizeBaseUrl('https://x.example/deployment/abc/'), 'https://x.example/deployment/abc');
  });
  it('implies the surface', () => {
    assert.equal(surfaceFromBaseUrl('http://127.0.0.1:8189').kind, 'self-hosted');
    assert.equal(surfaceFromBaseUrl('http://localhost:8189').kind, 'self-hosted');
    assert.equal(surfaceFromBaseUrl('https://api.example.com/deployment/dep-1').kind, 'deployment');
    assert.equal(surfaceFromBaseUrl('https://api.example.com').kind, 'cloud');
  });
  it('refuses a URL with credentials, a query, or another scheme, saying what to do', () => {
    for (const bad of ['ftp://x', 'https://u:p@x.example', 'https://x.example/?a=1', 'not a url']) {
      assert.throws(
        () => normalizeBaseUrl(bad),
        (e: unknown) => InputError.is(e) && e.code === 'bad_base_url',
      );
    }
  });
});

describe('surfaces: serverless deployments and the self-hosted companion', () => {
  it('a deployment id becomes its own host, https://{id}.run.comfy.app (never the cloud URL plus a path)', async () => {
    const { deploymentBaseUrl, surfaceFromBaseUrl: surface } = await import('../../src/core/v2/surface');
    const url = deploymentBaseUrl('my-deploy-1');
    assert.equal(url, 'https://my-deploy-1.run.comfy.app');
    assert.equal(surface(url).kind, 'deployment');
    assert.throws(
      () => deploymentBaseUrl('Not_A_Label'),
      (e: unknown) => InputError.is(e) && e.code === 'bad_deployment_id',
    );
  });

  it('discovers a running companion from $XDG_STATE_HOME/comfy-api-proxy/proxy.json, and not a dead one', async () => {
    const fs = await import('node:fs');
    const path = await import('node:path');
    const { discoverCompanion } = await import('../../src/core/v2/surface');
    const state = tempDir('cc-xdg-');
    assert.equal(await discoverCompanion({ XDG_STATE_HOME: state }), undefined);
    fs.mkdirSync(path.join(state, 'comfy-api-proxy'));
    fs.writeFileSync(
      path.join(state, 'comfy-api-proxy', 'proxy.json'),
      JSON.stringify({ pid: 4242, host: '127.0.0.1', port: 8190, url: 'http://127.0.0.1:8190' }),
    );
    assert.deepEqual(await discoverCompanion({ XDG_STATE_HOME: state }, () => true), {
      pid: 4242,
      host: '127.0.0.1',
      port: 8190,
      url: 'http://127.0.0.1:8190',
    });
    assert.equal(await discoverCompanion({ XDG_STATE_HOME: state }, () => false), undefined);
  });
});

describe('a top-level $schema in a workflow (removed before any submission; the API-format check ignores it)', () => {
  it('the API-format check ignores a top-level $schema string', () => {
    assert.equal(
      detectWorkflowFormat({ $schema: 'comfy-workflow-schema://active/workflow.schema.json', ...invertWorkflow() }),
      'api',
    );
    assert.equal(detectWorkflowFormat({ $schema: 'x' }), 'unknown');
    // A $schema that is not a string is not a schema reference: it must be a node like any other key.
    assert.equal(detectWorkflowFormat({ $schema: 3, ...invertWorkflow() }), 'unknown');
  });
  it('withoutSchemaKey removes the top-level $schema string and nothing else, leaving the input unchanged', () => {
    const wf = { $schema: 'comfy-workflow-schema://x', ...invertWorkflow() };
    const sent = withoutSchemaKey(wf);
    assert.deepEqual(sent, invertWorkflow());
    assert.equal(wf.$schema, 'comfy-workflow-schema://x');
    const nested = { '1': { class_type: 'X', inputs: { $schema: 'kept' } } };
    assert.equal(withoutSchemaKey(nested), nested);
    assert.equal(withoutSchemaKey(null), null);
  });
});
