// The start-up offer of a ComfyUI server running on this machine: whether to look (never when the person said "Not
// Now", when the settings do not parse, or when a connection already points there) and the look itself, one
// `GET /system_stats` (ComfyUI server API (observed)) against a real loopback server, with a manual clock for its
// timeout (no sleeps).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as http from 'node:http';
import { ManualClock } from '../../src/core';
import type { ConnectionEntry } from '../../src/core/connection';
import {
  COMFYUI_PROBE_TIMEOUT_MS,
  comfyUIOfferDecision,
  probeComfyUI,
  type ComfyUIOfferFacts,
} from '../../src/extension/connection/comfyuiProbe';
import { closedPort, startServer, type TestServer } from './httpServer';

const URL_8188 = 'http://127.0.0.1:8188';
const facts = (over: Partial<ComfyUIOfferFacts>): ComfyUIOfferFacts => ({
  baseUrl: URL_8188,
  declined: false,
  connections: [],
  defaultBaseUrl: 'http://127.0.0.1:8189',
  ...over,
});
const comfy = (baseUrl: string): ConnectionEntry => ({ name: 'Mine', surface: 'companion', baseUrl, api: 'comfyui' });

/** What a ComfyUI server answers at `/system_stats` (trimmed). */
const SYSTEM_STATS = {
  system: { os: 'posix', comfyui_version: '0.3.40', python_version: '3.12.3', embedded_python: false },
  devices: [{ name: 'cpu', type: 'cpu', index: null }],
};

function answer(status: number, body: unknown): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
}

describe('ComfyUI offer: whether to look for a ComfyUI server at start-up', () => {
  it('rule: no connection points at the address and the offer was never declined: probe', () => {
    assert.equal(comfyUIOfferDecision(facts({})), 'probe');
    assert.equal(
      comfyUIOfferDecision(facts({ connections: [comfy('http://127.0.0.1:8189'), comfy('http://localhost:8188')] })),
      'probe',
      'another port, another host name: not the probed address',
    );
  });

  it('rule: "Not Now" answered before: never asked again', () => {
    assert.equal(comfyUIOfferDecision(facts({ declined: true })), 'declined');
  });

  it('rule: a connection already at that address (written with a trailing slash or not) or comfyCloud.baseUrl there: not offered', () => {
    assert.equal(comfyUIOfferDecision(facts({ connections: [comfy('http://127.0.0.1:8188/')] })), 'known');
    assert.equal(
      comfyUIOfferDecision(facts({ connections: [{ name: 'x', surface: 'companion', baseUrl: URL_8188 }] })),
      'known',
      'whatever API the connection speaks',
    );
    assert.equal(comfyUIOfferDecision(facts({ defaultBaseUrl: URL_8188 })), 'known');
  });

  it('rule: settings that do not parse: nothing is offered over them', () => {
    assert.equal(comfyUIOfferDecision(facts({ connections: undefined })), 'unusable');
  });
});

describe('ComfyUI offer: the probe, one GET /system_stats', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('rule: a server answering /system_stats as ComfyUI does is found; one GET, no key, nothing else asked', async () => {
    server = await startServer(answer(200, SYSTEM_STATS));
    assert.equal(await probeComfyUI({ baseUrl: server.origin }), true);
    assert.deepEqual(
      server.seen.map((s) => `${s.method} ${s.url}`),
      ['GET /system_stats'],
    );
    assert.equal(server.seen[0]!.headers.authorization, undefined);
  });

  it('rule: a server that is not ComfyUI (404, a 5xx, JSON without a system object, not JSON) is not found, and not asked twice', async () => {
    for (const [status, body] of [
      [404, { error: 'not found' }],
      [500, { error: 'boom' }],
      [200, { status: 'ok' }],
      [200, { system: 'posix' }],
      [200, 'hello'],
    ] as const) {
      server = await startServer(
        typeof body === 'string'
          ? (_req, res) => {
              res.writeHead(status, { 'content-type': 'text/plain' });
              res.end(body);
            }
          : answer(status, body),
      );
      assert.equal(await probeComfyUI({ baseUrl: server.origin }), false, `${status} ${JSON.stringify(body)}`);
      assert.equal(server.seen.length, 1, `${status} ${JSON.stringify(body)}: retried`);
      await server.close();
      server = undefined;
    }
  });

  it('rule: nothing listening, or a bad address: not found, never a rejection', async () => {
    assert.equal(await probeComfyUI({ baseUrl: `http://127.0.0.1:${await closedPort()}` }), false);
    assert.equal(await probeComfyUI({ baseUrl: 'ftp://127.0.0.1:8188' }), false);
  });

  it('rule: no answer within the timeout (2 s by default, on the injected clock): not found', async () => {
    let arrived!: () => void;
    const held = new Promise<void>((resolve) => (arrived = resolve));
    server = await startServer(() => arrived()); // never answers
    const clock = new ManualClock(0);
    const probing = probeComfyUI({ baseUrl: server.origin, clock });
    await held;
    clock.advance(COMFYUI_PROBE_TIMEOUT_MS - 1);
    let settled = false;
    void probing.then(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(settled, false, 'gave up before its timeout');
    clock.advance(1);
    assert.equal(await probing, false);
    assert.equal(COMFYUI_PROBE_TIMEOUT_MS, 2_000);
  });
});

describe('ComfyUI connection: what the manifest shows, by the context keys the extension sets', () => {
  const root = path.resolve(__dirname, '../../..');
  const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    contributes: {
      viewsWelcome: { view: string; contents: string; when?: string }[];
      menus: Record<string, { command: string; when?: string }[]>;
    };
  };
  const nls = JSON.parse(fs.readFileSync(path.join(root, 'package.nls.json'), 'utf8')) as Record<string, string>;

  it('rule: the Assets view welcome follows capabilities.assets (comfyCloud.noAssets), never an API name: without assets it says where the outputs are', () => {
    const assets = manifest.contributes.viewsWelcome.filter((w) => w.view === 'comfyCloud.assets');
    assert.deepEqual(
      assets.map((w) => w.when),
      ['!comfyCloud.noAssets', 'comfyCloud.noAssets'],
    );
    const text = nls[assets[1]!.contents.replace(/^%|%$/g, '')] ?? '';
    assert.match(
      text,
      /^This connection has no assets: a ComfyUI server keeps files, not assets\. Outputs of its jobs are in the Jobs view\./,
    );
    assert.doesNotMatch(assets.map((w) => w.when).join(' '), /comfyCloud\.api/);
  });

  it('rule: Open in ComfyUI shows only where the active connection speaks comfyui (job items, a workflow editor title, the palette)', () => {
    const where = Object.entries(manifest.contributes.menus).flatMap(([menu, items]) =>
      items.filter((i) => i.command === 'comfyCloud.openInComfyUI').map((i) => ({ menu, when: i.when ?? '' })),
    );
    assert.deepEqual(where.map((w) => w.menu).sort(), ['commandPalette', 'editor/title', 'view/item/context']);
    for (const w of where) assert.match(w.when, /(^|&& )comfyCloud\.api == comfyui( &&|$)/, w.menu);
  });
});
