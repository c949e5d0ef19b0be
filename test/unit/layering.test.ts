/**
 * Imports point one way inside the client core (eslint.config.mjs, one `no-restricted-imports` block per folder):
 * util and http at the bottom, then state, then the job model (jobs), then the API folders (v2, v1, router,
 * workflowSchema), and the views on top. Each case lints a planted source at a path inside one folder, through
 * ESLint's own Node API with the repository's config, and asserts that each forbidden import is reported and each
 * allowed one is not.
 */
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { ESLint } from 'eslint';

const root = path.resolve(__dirname, '../../..');

// The project's config as it is, except the type-aware rules: a planted file is in no tsconfig, and the import rule
// needs no types.
const eslint = new ESLint({
  cwd: root,
  overrideConfig: {
    files: ['src/**/*.ts'],
    languageOptions: { parserOptions: { projectService: false } },
    rules: { '@typescript-eslint/no-floating-promises': 'off' },
  },
});

/** The import specifiers of `specifiers` that the config reports when imported by a file at `file`. */
async function reported(file: string, specifiers: string[]): Promise<string[]> {
  const text = specifiers.map((s, i) => `import * as m${i} from '${s}';\nexport const u${i} = m${i};\n`).join('');
  const [result] = await eslint.lintText(text, { filePath: path.join(root, file) });
  const lines = new Set(result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.line));
  return specifiers.filter((_, i) => lines.has(2 * i + 1));
}

/** Asserts that every `forbidden` import is reported and no `allowed` one is, for a file at `file`. */
async function layer(file: string, forbidden: string[], allowed: string[]): Promise<void> {
  assert.deepEqual(await reported(file, forbidden), forbidden, `forbidden imports not all reported in ${file}`);
  assert.deepEqual(await reported(file, allowed), [], `allowed imports reported in ${file}`);
}

describe('layering: imports inside the core point one way (lint)', function () {
  // The first lint loads the config and the TypeScript parser.
  this.timeout(60_000);

  it("util imports only util and http/errors, never vscode nor the core's index", async () => {
    await layer(
      'src/core/util/planted.ts',
      [
        '../http/transport',
        '../state/stateStore',
        '../jobs/model',
        '../v2/jobs',
        '../views/jobTree',
        '../connection/health',
        '..',
        'vscode',
      ],
      ['./text', '../http/errors'],
    );
  });

  it('http imports only http and util', async () => {
    await layer(
      'src/core/http/planted.ts',
      ['../state/stateStore', '../jobs/model', '../v2/surface', '../views/presentation', 'vscode'],
      ['./errors', '../util/text'],
    );
  });

  it("state imports only state, http and util: no API's types, not the job model", async () => {
    await layer(
      'src/core/state/planted.ts',
      [
        '../jobs/model',
        '../v2/schemas',
        '../router/keyStore',
        '../views/jobTree',
        '../connection/connections',
        'vscode',
      ],
      ['./stateStore', '../http/errors', '../util/hash'],
    );
  });

  it('jobs imports no API folder, no view and no connection', async () => {
    await layer(
      'src/core/jobs/planted.ts',
      [
        '../v1/client',
        '../v2/schemas',
        '../router/client',
        '../workflowSchema/validate',
        '../views/jobTree',
        '../connection/health',
        'vscode',
      ],
      ['./model', '../state/stateStore', '../util/workflow', '../http/errors'],
    );
  });

  it('v2 imports no view, no connection and no other API folder; it may implement jobs', async () => {
    await layer(
      'src/core/v2/planted.ts',
      ['../views/jobTree', '../connection/connections', '../v1/client', '../router', '../workflowSchema', 'vscode'],
      ['./surface', '../jobs/backend', '../state/stateStore', '../http/transport', '../util/hash'],
    );
  });

  it("comfyui shares the engine's protocol with v1 through engine/, never v1 itself; no other API, view nor connection", async () => {
    await layer(
      'src/core/comfyui/planted.ts',
      [
        '../v1/socket',
        '../v1',
        '../v2/client',
        '../router/client',
        '../views/presentation',
        '../connection/health',
        'vscode',
      ],
      ['../engine/socket', '../engine/tracker', '../http/errors', '../jobs/model', '../state/stateStore', './mapping'],
    );
  });

  it("engine (the engine's wire protocol) imports no API folder, no state, no view; the lower layers never import it", async () => {
    await layer(
      'src/core/engine/planted.ts',
      ['../v1/mapping', '../comfyui/client', '../v2/client', '../state/stateStore', '../views/presentation', 'vscode'],
      ['./frames', '../http/transport', '../jobs/model', '../util/workflow'],
    );
    await layer('src/core/jobs/planted.ts', ['../engine/socket', '../comfyui/client'], ['./model']);
    await layer('src/core/http/planted.ts', ['../engine/frames'], ['./errors']);
    await layer('src/core/v2/planted.ts', ['../engine/frames', '../comfyui/mapping'], ['../http/errors']);
    await layer('src/core/views/planted.ts', ['../engine/tracker', '../comfyui/mapping'], ['../jobs/model']);
  });

  it('v1 imports nothing of v2 (the shared errors and the download are in http), and no view nor connection', async () => {
    await layer(
      'src/core/v1/planted.ts',
      [
        '../v2/errors',
        '../v2/download',
        '../v2/assets',
        '../v2/client',
        '../v2',
        '../router/client',
        '../views/presentation',
        '../connection/health',
        'vscode',
      ],
      ['../http/errors', '../http/download', '../jobs/model', './mapping'],
    );
  });

  it('router and workflowSchema import no other API folder, no view and no connection', async () => {
    await layer(
      'src/core/router/planted.ts',
      ['../v2/client', '../v1', '../workflowSchema/validate', '../views/jobTree', '../connection/health', 'vscode'],
      ['./schemas', '../jobs/model', '../util/text', '../state/stateStore'],
    );
    await layer(
      'src/core/workflowSchema/planted.ts',
      ['../router/schemas', '../v2/schemas', '../v1/client', '../views/jobTree', 'vscode'],
      ['./validate', '../util/workflow'],
    );
  });

  it('graph reads util, http/errors, workflowSchema, convert and jobs; no API folder, state, view nor connection', async () => {
    await layer(
      'src/core/graph/planted.ts',
      [
        '../v1/client',
        '../v2/errors',
        '../router/client',
        '../state/stateStore',
        '../views/presentation',
        '../connection/health',
        '../http/transport',
        '..',
        'vscode',
      ],
      [
        './model',
        '../util/workflow',
        '../http/errors',
        '../workflowSchema/validate',
        '../convert/uiGraph',
        '../jobs/model',
      ],
    );
  });

  it('batch reads v2, jobs, state, http and util; no view, connection nor other API folder', async () => {
    await layer(
      'src/core/batch/planted.ts',
      [
        '../v1/client',
        '../router/client',
        '../workflowSchema/validate',
        '../views/jobTree',
        '../connection/health',
        '..',
        'vscode',
      ],
      [
        './variations',
        '../v2/assets',
        '../v2/submission',
        '../jobs/model',
        '../state/stateStore',
        '../http/clock',
        '../util/workflow',
      ],
    );
  });

  it("backends alone (besides the API folders) imports both v1 and v2: it builds a connection's job backend; no view, batch nor router", async () => {
    await layer(
      'src/core/backends/planted.ts',
      ['../views/jobTree', '../batch/run', '../router/client', '../workflowSchema/validate', 'vscode'],
      [
        '../v1/jobBackend',
        '../v2/jobBackend',
        '../v1/client',
        '../v2/client',
        '../jobs/backend',
        '../connection/connections',
        '../http/engine',
      ],
    );
    // Every other folder of the core that may import one API folder may not import the other.
    await layer(
      'src/core/connection/planted.ts',
      ['../v1/client', '../jobs/backend', '../views/jobTree', '../batch/run', '../backends', 'vscode'],
      ['../v2/surface', '../http/errors', '../util/l10n'],
    );
    await layer('src/core/batch/planted.ts', ['../v1/jobBackend'], ['../v2/jobBackend']);
    await layer('src/core/v2/planted.ts', ['../v1/jobBackend'], []);
  });

  it("the CLI reaches an API through core/backends and the core's indexes, never a deep module of core/v1 or core/v2", async () => {
    await layer(
      'src/cli/planted.ts',
      ['../core/v2/mapping', '../core/v1/jobBackend', '../core/v2/client', 'vscode'],
      ['../core', '../core/backends', '../core/router', './output', './commands/submit'],
    );
    await layer(
      'src/cli/commands/planted.ts',
      ['../../core/v2/jobBackend', '../../core/v1/client', 'vscode'],
      ['../../core', '../../core/backends', '../context', '../follow'],
    );
  });

  it('a CLI command module imports no other command module (what two share lives in src/cli)', async () => {
    await layer(
      'src/cli/commands/planted.ts',
      ['./batch', './submit', './jobs'],
      ['../options', '../batchRun', '../capabilities'],
    );
  });

  it('views read jobs, state, http and util, never an API folder nor a connection', async () => {
    await layer(
      'src/core/views/planted.ts',
      ['../v2/schemas', '../v1/client', '../router/modelTree', '../workflowSchema', '../connection/health', 'vscode'],
      ['./jobTree', './monitor/protocol', '../jobs/model', '../state/stateStore', '../http/errors', '../util/text'],
    );
    await layer(
      'src/core/views/monitor/planted.ts',
      ['../../v2/schemas', '../../router', 'vscode'],
      ['./protocol', '../jobTree', '../../jobs/progress'],
    );
  });
});

describe("layering: the extension's feature folders import each other only through their index.ts (lint)", function () {
  this.timeout(60_000);

  /** A module inside each feature, and the other features' insides it may not import. */
  const FEATURES: Record<string, string> = {
    jobs: 'jobsView',
    batches: 'batches',
    workflow: 'submit',
    connection: 'connectionStatus',
    assets: 'assetsView',
    models: 'modelsView',
    monitor: 'monitorManager',
  };

  for (const feature of Object.keys(FEATURES)) {
    it(`${feature} imports another feature's index.ts, never its insides; platform and the core freely`, async () => {
      const others = Object.keys(FEATURES).filter((f) => f !== feature);
      await layer(
        `src/extension/${feature}/planted.ts`,
        others.map((f) => `../${f}/${FEATURES[f]}`),
        [
          ...others.map((f) => `../${f}`),
          `../${others[0]}/index`,
          `./${FEATURES[feature]}`,
          '../platform/config',
          '../../core',
          '../../core/views/jobList',
          'vscode',
        ],
      );
    });
  }

  it('platform imports no feature (not even its index.ts), nor the composition root', async () => {
    const features = Object.keys(FEATURES);
    await layer(
      'src/extension/platform/planted.ts',
      [...features.map((f) => `../${f}`), ...features.map((f) => `../${f}/${FEATURES[f]}`), '../extension', '../api'],
      ['./config', './disposable', '../../core', '../../core/router', 'vscode'],
    );
  });

  it('no module of the extension imports an API folder (core/v1, core/v2): a connection becomes a backend in core/backends', async () => {
    await layer(
      'src/extension/planted.ts',
      ['../core/v1', '../core/v2/client', '../core/v1/jobBackend'],
      ['../core', '../core/backends', './platform/config'],
    );
    await layer(
      'src/extension/jobs/planted.ts',
      ['../../core/v2/mapping', '../../core/v1', '../../core/v2'],
      ['../../core', '../../core/backends'],
    );
    await layer(
      'src/extension/platform/planted.ts',
      ['../../core/v1/client', '../../core/v2/jobBackend'],
      ['../../core/backends'],
    );
  });

  it('the emulator imports the core, never the extension nor the CLI', async () => {
    await layer(
      'src/emulator/engine/planted.ts',
      ['../../extension/platform/config', '../../cli/context', '../../cli', 'vscode'],
      ['../../core/util', '../../core/http/errors', '../errors'],
    );
  });

  it("a webview script imports the core's pure modules, never the host, the CLI, the emulator nor vscode", async () => {
    await layer(
      'media/monitor/planted.ts',
      ['../../src/extension/monitor/monitorPanel', '../../src/cli/output', '../../src/emulator/server', 'vscode'],
      ['../../src/core/views/monitor/viewModel', '../../src/core/jobs/progress', './dom'],
    );
  });
});
