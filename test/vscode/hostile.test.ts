// The extension against a hostile server (server data is untrusted, in the extension as in the CLI: the same core
// functions): a job whose id and output names try to leave the output folder, and whose answers carry odd values, still
// downloads every output inside `.comfy/outputs/`, under safe names. The server is a small loopback one started here.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import * as vscode from 'vscode';

interface SubmitResult {
  jobId?: string;
  status: string;
  files: string[];
  error?: { code: string; message: string };
}

const WORKFLOW = {
  '1': { class_type: 'EmptyImage', inputs: { width: 8, height: 8, batch_size: 1, color: 0 } },
  '2': { class_type: 'SaveImage', inputs: { images: ['1', 0], filename_prefix: 'x' } },
};

suite('The extension against a hostile server', () => {
  let server: http.Server;
  let origin: string;
  const job = {
    id: '../../hostile-job',
    status: 'succeeded',
    created_at: '2026-11-22T10:00:00Z',
    expires_at: '2026-11-23T10:00:00Z',
    queue_position: 'first',
    progress: null,
    error: null,
    metrics: { execution_ms: 'fast' },
    urls: { self: '/api/v2/jobs/j', events: null, cancel: null },
    outputs: [
      { id: '../../x', name: '../../escape.png', content_type: 'image/png', url: '/content/1', hash: null },
      { id: '..', name: '..', content_type: 'image/png', url: '/content/2', hash: null },
    ],
  };

  suiteSetup(async () => {
    server = http.createServer((req, res) => {
      if (req.url?.startsWith('/content/')) {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(`bytes of ${req.url}`);
        return;
      }
      if (req.url?.endsWith('/events')) {
        res.writeHead(501, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 'not_implemented', message: 'poll' } }));
        return;
      }
      res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(job));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await vscode.workspace.getConfiguration('comfyCloud').update('baseUrl', origin, vscode.ConfigurationTarget.Global);
  });

  suiteTeardown(async () => {
    await vscode.workspace
      .getConfiguration('comfyCloud')
      .update('baseUrl', undefined, vscode.ConfigurationTarget.Global);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  test('outputs named .. and ../../escape.png of a job whose id is ../../hostile-job land inside .comfy/outputs under safe names', async () => {
    const folder = vscode.workspace.workspaceFolders?.[0];
    assert.ok(folder, 'no workspace folder is open');
    const uri = vscode.Uri.joinPath(folder.uri, 'hostile-workflow.json');
    fs.writeFileSync(uri.fsPath, JSON.stringify(WORKFLOW));
    const result = await vscode.commands.executeCommand<SubmitResult>('comfyCloud.submitWorkflow', uri);
    assert.equal(result?.status, 'succeeded', JSON.stringify(result));
    const outputs = fs.realpathSync(path.join(folder.uri.fsPath, '.comfy', 'outputs'));
    assert.equal(result.files.length, 2, JSON.stringify(result.files));
    for (const file of result.files) {
      assert.equal(
        path.dirname(path.dirname(fs.realpathSync(file))),
        outputs,
        `${file} is not in a job folder under ${outputs}`,
      );
      assert.match(path.basename(file), /^[\w.-]+$/);
    }
    assert.deepEqual(result.files.map((f) => fs.readFileSync(f, 'utf8')).sort(), [
      'bytes of /content/1',
      'bytes of /content/2',
    ]);
    assert.ok(!fs.existsSync(path.join(folder.uri.fsPath, 'escape.png')), 'an output escaped to the workspace root');
    assert.ok(
      !fs.existsSync(path.join(folder.uri.fsPath, '.comfy', 'escape.png')),
      'an output escaped the outputs folder',
    );
  });
});
