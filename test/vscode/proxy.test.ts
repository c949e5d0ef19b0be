// VS Code's networking in the extension: requests go through the extension host's fetch, which honours
// `http.proxy`. The emulator is given a host name that only the proxy started here resolves (comfy-emulator.test),
// so a request that bypasses the proxy fails, and loopback exemptions cannot hide it.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import * as vscode from 'vscode';
import { startEmulator } from '../../src/emulator';

interface SubmitResult {
  jobId?: string;
  status: string;
  files: string[];
  error?: { code: string; message: string };
}

const HOST = 'comfy-emulator.test';

suite('The extension sends through the extension host fetch, and so through http.proxy', () => {
  let emu: Awaited<ReturnType<typeof startEmulator>>;
  let proxy: http.Server;
  const seen: string[] = [];

  suiteSetup(async () => {
    emu = await startEmulator({ port: 0 });
    const emuPort = new URL(emu.baseUrl).port;
    // A forward proxy for plain http: absolute-form request targets; only it knows where comfy-emulator.test is.
    proxy = http.createServer((req, res) => {
      let target: URL;
      try {
        target = new URL(req.url ?? '');
      } catch {
        res.writeHead(400).end('the proxy takes absolute URLs');
        return;
      }
      seen.push(`${req.method} ${target.host}${target.pathname}`);
      if (target.hostname !== HOST) {
        res.writeHead(502).end(`the proxy knows only ${HOST}`);
        return;
      }
      const upstream = http.request(
        {
          host: '127.0.0.1',
          port: Number(target.port || emuPort),
          method: req.method,
          path: `${target.pathname}${target.search}`,
          headers: { ...req.headers, host: target.host },
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      upstream.on('error', (err) => res.writeHead(502).end(String(err)));
      req.pipe(upstream);
    });
    // A tunnel for CONNECT, which undici's ProxyAgent (behind the host's fetch) uses for every request, http too.
    proxy.on('connect', (req: http.IncomingMessage, socket: import('node:net').Socket, head: Buffer) => {
      seen.push(`CONNECT ${req.url ?? ''}`);
      const [host, port] = (req.url ?? '').split(':');
      if (host !== HOST) {
        socket.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
        return;
      }
      const upstream = net.connect(Number(port || emuPort), '127.0.0.1', () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) upstream.write(head);
        upstream.pipe(socket);
        socket.pipe(upstream);
      });
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    await vscode.workspace.getConfiguration('http').update('proxy', proxyUrl, vscode.ConfigurationTarget.Global);
    await vscode.workspace
      .getConfiguration('comfyCloud')
      .update('baseUrl', `http://${HOST}:${emuPort}`, vscode.ConfigurationTarget.Global);
  });

  suiteTeardown(async () => {
    await vscode.workspace
      .getConfiguration('comfyCloud')
      .update('baseUrl', undefined, vscode.ConfigurationTarget.Global);
    await vscode.workspace.getConfiguration('http').update('proxy', undefined, vscode.ConfigurationTarget.Global);
    proxy.closeAllConnections();
    await new Promise<void>((resolve) => proxy.close(() => resolve()));
    await emu.close();
  });

  test('Submit Workflow reaches a server only the proxy can resolve: the job runs and its output is downloaded', async () => {
    const folder = vscode.workspace.workspaceFolders?.[0];
    assert.ok(folder, 'no workspace folder is open');
    const uri = vscode.Uri.joinPath(folder.uri, 'proxied-workflow.json');
    const workflow = {
      '1': { class_type: 'EmptyImage', inputs: { width: 16, height: 16, batch_size: 1, color: 255 } },
      '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'proxied' } },
    };
    fs.writeFileSync(uri.fsPath, JSON.stringify(workflow));
    const result = await Promise.race([
      vscode.commands.executeCommand<SubmitResult>('comfyCloud.submitWorkflow', uri),
      new Promise<SubmitResult>((resolve) =>
        setTimeout(() => resolve({ status: 'no answer within 30 s', files: [] }), 30_000),
      ),
    ]);
    assert.equal(result?.status, 'succeeded', `${JSON.stringify(result)}; the proxy saw ${JSON.stringify(seen)}`);
    assert.equal(result.files.length, 1);
    // Through the proxy: as absolute-form requests, or through a CONNECT tunnel to the emulator's name.
    assert.ok(
      seen.some(
        (s) => s.startsWith(`CONNECT ${HOST}:`) || (s.startsWith(`POST ${HOST}:`) && s.endsWith('/api/v2/jobs')),
      ),
      `the submission did not go through the proxy: ${JSON.stringify(seen)}`,
    );
    assert.ok(
      emu.requests.some((r) => r.method === 'POST' && r.path === '/api/v2/jobs'),
      'the emulator never got the submission',
    );
  });
});
