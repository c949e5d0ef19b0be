/**
 * Serverless deployments at their own host. Rules: Job and Asset API v2, What the service does (a deployment id is a
 * DNS-safe subdomain label; a client moves between surfaces by the base address) and the v2 OpenAPI document's
 * `servers` (Comfy Cloud `https://cloud.comfy.org`, a deployment `https://{deployment}.run.comfy.app`, staging
 * `{deployment}.stg.run.comfy.app`). A deployment by id is never the cloud's URL plus `/deployment/{id}`; settings
 * and CLI options in that old form keep working, moved to the deployment's host, with a note.
 */
import * as assert from 'node:assert/strict';
import {
  CLOUD_BASE_URL,
  DEFAULT_DEPLOYMENT_DOMAIN,
  STAGING_DEPLOYMENT_DOMAIN,
  deploymentBaseUrl,
  legacyDeploymentAddress,
  normalizeDeploymentDomain,
  surfaceFromBaseUrl,
} from '../../src/core/v2/surface';
import { V2Client } from '../../src/core/v2/client';
import { resolveConnection, upsertConnection } from '../../src/core/connection';
import { localhostLookup } from '../../src/core/http/undiciEngine';
import { invertWorkflow, inputError } from './builders';
import { useEmulator } from './harness';

describe('deployments: a deployment by id is its own host (v2 servers: https://{deployment}.run.comfy.app)', () => {
  it('rule: the deployment id is the subdomain label of run.comfy.app, over https', () => {
    assert.equal(DEFAULT_DEPLOYMENT_DOMAIN, 'run.comfy.app');
    assert.equal(
      deploymentBaseUrl('dep-1234abcd-56ef-7890-abcd-ef1234567890'),
      'https://dep-1234abcd-56ef-7890-abcd-ef1234567890.run.comfy.app',
    );
    assert.equal(deploymentBaseUrl('demo'), 'https://demo.run.comfy.app');
  });
  it('rule: the public addresses are the contract servers (cloud, staging deployment domain)', () => {
    assert.equal(CLOUD_BASE_URL, 'https://cloud.comfy.org');
    assert.equal(deploymentBaseUrl('demo', STAGING_DEPLOYMENT_DOMAIN), 'https://demo.stg.run.comfy.app');
  });
  it('rule: a deployment id is a DNS-safe subdomain label (lowercase letters, digits, inner dashes, at most 63)', () => {
    for (const bad of ['', 'Demo', 'de_mo', '-demo', 'demo-', 'a.b', 'a'.repeat(64), 'dé']) {
      assert.throws(
        () => deploymentBaseUrl(bad),
        inputError('bad_deployment_id', /not a deployment id/),
        JSON.stringify(bad),
      );
    }
    assert.equal(deploymentBaseUrl('a'.repeat(63)), `https://${'a'.repeat(63)}.run.comfy.app`);
  });
  it('rule: a deployment domain is a host name (optional :port), no scheme, path or IP address', () => {
    assert.equal(normalizeDeploymentDomain(' Stg.Run.Comfy.App. '), 'stg.run.comfy.app');
    assert.equal(normalizeDeploymentDomain('localhost:08190'), 'localhost:8190');
    for (const bad of [
      '',
      'https://run.comfy.app',
      'run.comfy.app/x',
      'user@run.comfy.app',
      '127.0.0.1',
      'run..app',
      '-x.app',
      'x.app:0',
      'x.app:70000',
      'x.app?a=1',
    ]) {
      assert.throws(
        () => normalizeDeploymentDomain(bad),
        inputError('bad_deployment_domain', /not a deployment domain.*run\.comfy\.app/),
        JSON.stringify(bad),
      );
    }
  });
  it('rule: a deployment under a localhost domain (the local emulator) is reached over http on its own host', () => {
    assert.equal(deploymentBaseUrl('dep-1', 'localhost:8190'), 'http://dep-1.localhost:8190');
    assert.equal(deploymentBaseUrl('dep-1', 'emu.localhost'), 'http://dep-1.emu.localhost');
    assert.equal(deploymentBaseUrl('dep-1', 'localhost.example'), 'https://dep-1.localhost.example');
  });
  it('a base URL on a deployment host implies the deployment surface', () => {
    assert.equal(surfaceFromBaseUrl('https://demo.run.comfy.app').kind, 'deployment');
    assert.equal(surfaceFromBaseUrl('https://demo.stg.run.comfy.app').kind, 'deployment');
    assert.equal(surfaceFromBaseUrl(CLOUD_BASE_URL).kind, 'cloud');
  });
});

describe('deployments: connections build the same URL, under comfyCloud.deploymentDomain', () => {
  it("rule: a deployment connection's base URL is https://{deploymentId}.run.comfy.app, whatever cloud connection exists", () => {
    const list = [
      { name: 'Cloud', surface: 'cloud', baseUrl: CLOUD_BASE_URL },
      { name: 'Demo', surface: 'deployment', deploymentId: 'demo-1' },
    ];
    const active = resolveConnection(list, 'Demo', 'http://127.0.0.1:8189');
    assert.deepEqual(active, {
      name: 'Demo',
      kind: 'deployment',
      api: 'v2',
      surface: { kind: 'deployment', baseUrl: 'https://demo-1.run.comfy.app', origin: 'https://demo-1.run.comfy.app' },
    });
  });
  it('rule: the deployment domain can be changed for staging, and a deployment needs no cloud connection', () => {
    const active = resolveConnection(
      [{ name: 'D', surface: 'deployment', deploymentId: 'demo' }],
      'D',
      '',
      STAGING_DEPLOYMENT_DOMAIN,
    );
    assert.equal(active.surface.baseUrl, 'https://demo.stg.run.comfy.app');
    // Under a domain of the user's choosing it is still a deployment (its connection says so).
    const local = resolveConnection(
      [{ name: 'D', surface: 'deployment', deploymentId: 'demo' }],
      'D',
      '',
      'localhost:9',
    );
    assert.deepEqual(local.surface, {
      kind: 'deployment',
      baseUrl: 'http://demo.localhost:9',
      origin: 'http://demo.localhost:9',
    });
  });
  it('rule: a bad deployment domain is an error naming the setting, and only for a URL built from it', () => {
    const list = [
      { name: 'D', surface: 'deployment', deploymentId: 'demo' },
      { name: 'Laptop', surface: 'companion', baseUrl: 'http://127.0.0.1:8189' },
    ];
    assert.throws(
      () => resolveConnection(list, 'D', '', 'https://run.comfy.app'),
      inputError('bad_deployment_domain', /^Setting comfyCloud\.deploymentDomain: .*has a scheme/),
    );
    assert.equal(
      resolveConnection(list, 'Laptop', '', 'https://run.comfy.app').surface.baseUrl,
      'http://127.0.0.1:8189',
    );
    assert.throws(
      () => upsertConnection([], { name: 'D', surface: 'deployment', deploymentId: 'demo' }, 'x/y'),
      inputError('bad_deployment_domain'),
    );
  });
  it("a bad deployment id is the entry's error, whatever the domain", () => {
    assert.throws(
      () =>
        resolveConnection(
          [{ name: 'Bad', surface: 'deployment', deploymentId: 'Not_A_Label' }],
          'Bad',
          '',
          'https://bad',
        ),
      inputError('bad_connection', /"Bad".*not a deployment id/),
    );
  });
});

describe('deployments: settings in the old form keep working, moved to the deployment host, with a note', () => {
  it('rule: a deployment entry with a baseUrl (the cloud URL an earlier version put /deployment/{id} under) reaches the deployment host; legacy says what was and what is', () => {
    const list = [{ name: 'Old', surface: 'deployment', baseUrl: 'https://cloud.example/', deploymentId: 'demo' }];
    const active = resolveConnection(list, 'Old', '');
    assert.equal(active.surface.baseUrl, 'https://demo.run.comfy.app');
    assert.equal(active.surface.kind, 'deployment');
    assert.deepEqual(active.legacy, {
      before: 'https://cloud.example/deployment/demo',
      now: 'https://demo.run.comfy.app',
      deploymentId: 'demo',
    });
  });
  it('rule: the old form https://cloud.comfy.org/deployment/{id} as a base URL is moved to the deployment host (the public cloud serves no such path)', () => {
    const active = resolveConnection(undefined, '', 'https://cloud.comfy.org/deployment/demo/');
    assert.equal(active.surface.baseUrl, 'https://demo.run.comfy.app');
    assert.equal(active.surface.kind, 'deployment');
    assert.deepEqual(active.legacy, {
      before: 'https://cloud.comfy.org/deployment/demo',
      now: 'https://demo.run.comfy.app',
      deploymentId: 'demo',
    });
    const entry = resolveConnection(
      [{ name: 'C', surface: 'cloud', baseUrl: 'https://cloud.comfy.org/deployment/demo' }],
      'C',
      '',
      STAGING_DEPLOYMENT_DOMAIN,
    );
    assert.equal(entry.surface.baseUrl, 'https://demo.stg.run.comfy.app');
    assert.ok(entry.legacy);
  });
  it('rule: another /deployment/{id} prefix (a gateway or emulator mounting the API there) is used as it is, without a note', () => {
    for (const url of [
      'https://gateway.example/deployment/demo',
      'http://127.0.0.1:8189/deployment/demo',
      'https://cloud.comfy.org/api',
    ]) {
      const active = resolveConnection(undefined, '', url);
      assert.equal(active.surface.baseUrl, url);
      assert.equal(active.legacy, undefined, url);
      assert.equal(legacyDeploymentAddress(url), undefined, url);
    }
  });
  it('a connection in the new form carries no note', () => {
    assert.equal(
      resolveConnection([{ name: 'D', surface: 'deployment', deploymentId: 'demo' }], 'D', '').legacy,
      undefined,
    );
    assert.equal(resolveConnection(undefined, '', 'https://demo.run.comfy.app').legacy, undefined);
  });
});

describe('deployments: names under .localhost resolve to loopback in the client (RFC 6761), others through the DNS', () => {
  const lookup = (host: string, all: boolean): Promise<unknown> =>
    new Promise((resolve, reject) => {
      localhostLookup(host, { all }, (err, address, family) =>
        err ? reject(err) : resolve(all ? address : { address, family }),
      );
    });

  it('rule: <id>.localhost is 127.0.0.1, asked one address or all of them', async () => {
    assert.deepEqual(await lookup('dep-1.localhost', false), { address: '127.0.0.1', family: 4 });
    assert.deepEqual(await lookup('DEP-1.Emu.Localhost.', true), [{ address: '127.0.0.1', family: 4 }]);
  });
  it('an IP address goes through dns.lookup unchanged (no name is invented)', async () => {
    assert.deepEqual(await lookup('127.0.0.2', false), { address: '127.0.0.2', family: 4 });
  });
});

describe('deployments: the emulator serves a deployment on a host of its own; the client reaches it by id (v2 submit, get)', () => {
  const emulator = useEmulator({ deploymentDomain: 'localhost' });

  it('rule: submit and get by deployment id reach <id>.localhost: the Host names the deployment, links are host-relative, logs are there', async () => {
    const port = new URL(emulator().origin).port;
    const baseUrl = deploymentBaseUrl('dep-1', `localhost:${port}`);
    assert.equal(baseUrl, `http://dep-1.localhost:${port}`);
    const client = new V2Client({ baseUrl });
    try {
      const sub = await client.jobs.submit(invertWorkflow({ prefix: 'by-host' }));
      assert.ok(sub.job.urls?.self?.startsWith('/api/v2/jobs/'), JSON.stringify(sub.job.urls));
      const final = await client.watch(sub);
      assert.equal(final.job.status, 'succeeded');
      const again = await client.jobs.get(sub.job.id);
      assert.equal(again.job.status, 'succeeded');
      assert.equal(again.source.host, `dep-1.localhost:${port}`);
      assert.ok(again.job.logs !== undefined, 'a deployment job carries its logs');
    } finally {
      await client.close();
    }
    const hosts = new Set(emulator().requests.map((r) => r.headers.host));
    assert.deepEqual([...hosts], [`dep-1.localhost:${port}`]);
  });
  it('rule: a host that names no deployment is answered 404 not_found (as the public gateway)', async () => {
    const res = await fetch(`${emulator().origin}/api/v2/jobs`);
    assert.equal(res.status, 404);
    const body = (await res.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'not_found');
    assert.match(body.error.message, /<id>\.localhost/);
  });
});
