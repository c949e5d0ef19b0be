// A connection that speaks the deprecated v1 API (Cloud API v1 (deprecated)): a connection may use the v1 surface.
import * as assert from 'node:assert/strict';
import { InputError } from '../../src/core';
import { CONNECTION_APIS, isDeprecatedApi, parseConnections, resolveConnection } from '../../src/core/connection';

describe('connections: the api field (a connection may speak the deprecated v1 API)', () => {
  it('"api": "v1" is kept and the active connection says v1; absent or "v2" is v2; the default connection is v2', () => {
    const list = [
      { name: 'Engine', surface: 'companion', baseUrl: 'http://127.0.0.1:8188', api: 'v1' },
      { name: 'Cloud', surface: 'cloud', baseUrl: 'https://cloud.example', api: 'v2' },
      { name: 'Plain', surface: 'emulator', baseUrl: 'http://127.0.0.1:9000' },
    ];
    assert.deepEqual(
      parseConnections(list).map((c) => c.api),
      ['v1', undefined, undefined],
    );
    assert.equal(resolveConnection(list, 'Engine', 'https://cloud.example').api, 'v1');
    assert.equal(resolveConnection(list, 'Cloud', 'https://cloud.example').api, 'v2');
    assert.equal(resolveConnection(list, 'Plain', 'https://cloud.example').api, 'v2');
    assert.equal(resolveConnection(list, '', 'https://cloud.example').api, 'v2');
  });

  it('an unknown api value is refused with the entry named and the values to use', () => {
    assert.throws(
      () => parseConnections([{ name: 'Odd', surface: 'cloud', baseUrl: 'https://cloud.example', api: 'v3' }]),
      (err: unknown) =>
        InputError.is(err) &&
        err.code === 'bad_connection' &&
        /"Odd" has api "v3"; use "v2" \(the default\), "v1" \(deprecated\) or "comfyui" \(a ComfyUI server\)/.test(
          err.message,
        ),
    );
    assert.throws(
      () => parseConnections([{ name: 'Num', surface: 'cloud', baseUrl: 'https://cloud.example', api: 1 }]),
      /"Num" has api 1/,
    );
  });

  it('a deployment cannot speak v1 (deployments are v2 only)', () => {
    assert.throws(
      () =>
        parseConnections([
          { name: 'Dep', surface: 'deployment', baseUrl: 'https://cloud.example', deploymentId: 'dep-1', api: 'v1' },
        ]),
      /the deployment "Dep" speaks v2 only; remove its "api": "v1"/,
    );
  });

  it('only v1 is deprecated (what the status bar and the one-time notice read, never the API by name)', () => {
    assert.deepEqual(
      CONNECTION_APIS.filter((api) => isDeprecatedApi(api)),
      ['v1'],
    );
  });
});
