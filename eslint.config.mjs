// Lint: the recommended JavaScript and TypeScript rules, no floating promise in src/ (type-aware), plus a guard that
// the client core, CLI and emulator never import `vscode` (they run in plain Node).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const NO_VSCODE = { name: 'vscode', message: 'Only src/extension may import vscode.' };
// The API folders of the core: each implements the job model (core/jobs) for one API.
const API = ['v1', 'v2', 'router', 'workflowSchema', 'comfyui'];
// The ComfyUI engine's wire protocol (socket, frames, tracker, file references, errors, object_info), shared by the
// API folders that speak it (v1, comfyui): below them, above the job model.
const ENGINE = 'engine';

/**
 * One layer of the core: `files` may not import a module of the core `folders` (a relative specifier that climbs out
 * of its own folder into one of them), except the modules `allowed` (`folder/module`), nor the core's index.
 */
function layer(files, folders, message, allowed = []) {
  const except = allowed.length > 0 ? `(?!(?:${allowed.join('|')})(?:\\.js)?$)` : '';
  return [
    {
      files,
      rules: {
        'no-restricted-imports': [
          'error',
          {
            paths: [NO_VSCODE],
            patterns: [
              { regex: `^(?:\\.\\./)+${except}(?:${folders.join('|')})(?:/|$)`, message },
              {
                regex: '^\\.\\.(?:/\\.\\.)*(?:/index)?$',
                message: "Inside the core, import the module itself, not the core's index.",
              },
            ],
          },
        ],
      },
    },
  ];
}

// The extension's feature folders (src/extension/<feature>/), each registering itself through its index.ts, over
// platform/ (settings, log, secrets, display, the shared services).
const FEATURES = ['jobs', 'batches', 'workflow', 'connection', 'assets', 'models', 'monitor'];

/** The extension never names an API folder: a connection becomes a job backend in core/backends, and views ask capabilities. */
const NO_API_FOLDER = {
  regex: '^(?:\\.\\./)+core/(?:v1|v2|comfyui|engine)(?:/|$)',
  message:
    "The extension reaches an API only through the job backend core/backends builds (and the core's module indexes): never core/v1, core/v2, core/comfyui or core/engine.",
};

/**
 * Imports between the extension's feature folders: a feature reads another only through its index.ts (`../jobs`),
 * never its insides (`../jobs/jobsView`); platform/ imports no feature (every feature builds on it).
 */
function features() {
  const blocks = FEATURES.map((feature) => ({
    files: [`src/extension/${feature}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^(?:\\.\\./)+(?:${FEATURES.filter((f) => f !== feature).join('|')})/(?!index(?:\\.js)?$)`,
              message:
                'A feature imports another feature only through its index.ts (its register and what it exports), never its insides.',
            },
            NO_API_FOLDER,
          ],
        },
      ],
    },
  }));
  blocks.push({
    files: ['src/extension/platform/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^(?:\\.\\./)+(?:${FEATURES.join('|')}|extension|api)(?:/|$)`,
              message: 'platform is below every feature: it imports none.',
            },
            NO_API_FOLDER,
          ],
        },
      ],
    },
  });
  blocks.push({
    files: ['src/extension/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [NO_API_FOLDER] }] },
  });
  return blocks;
}

/**
 * The CLI's import rules for `files`: never `vscode`, never a deep module of an API folder of the core (`core/v1/…`,
 * `core/v2/…`: the CLI reaches an API through core/backends and the core's indexes), plus the `extra` patterns.
 */
function cli(files, extra) {
  return [
    {
      files,
      rules: {
        'no-restricted-imports': [
          'error',
          {
            paths: [NO_VSCODE],
            patterns: [
              {
                regex: '^(?:\\.\\./)+core/(?:v1|v2|comfyui|engine)/',
                message:
                  "The CLI reaches an API through the job backend core/backends builds (and the core's module indexes): no deep module of core/v1, core/v2, core/comfyui or core/engine.",
              },
              ...extra,
            ],
          },
        ],
      },
    },
  ];
}

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'node_modules/**', 'test/vscode-env/**', '.artifacts/**', 'test-results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'smart'],
      'no-console': 'off',
    },
  },
  {
    // Rules that need type information, for the shipped code only (no floating promise: a dropped promise
    // hides its rejection). The project service reads tsconfig.json once for all of src/.
    files: ['src/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: { '@typescript-eslint/no-floating-promises': 'error' },
  },
  {
    files: ['src/core/**/*.ts', 'src/cli/**/*.ts', 'src/emulator/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: [NO_VSCODE] }] },
  },
  // Imports point one way inside the client core: util and http at the bottom, then state, then the job model
  // (jobs), then the API folders that implement it (v2, v1, router, workflowSchema), and the views and connections
  // on top. One block per folder; each repeats the vscode ban, since a later block's no-restricted-imports replaces
  // an earlier one for the same files. test/unit/layering.test.ts plants a forbidden import in each folder.
  ...layer(
    ['src/core/util/**/*.ts'],
    ['http', 'state', 'jobs', ENGINE, ...API, 'views', 'connection'],
    'util imports only util (and http/errors, the error base): it is below every other folder.',
    ['http/errors'],
  ),
  ...layer(
    ['src/core/http/**/*.ts'],
    ['state', 'jobs', ENGINE, ...API, 'views', 'connection'],
    'http imports only http and util: every API shares it.',
  ),
  ...layer(
    ['src/core/state/**/*.ts'],
    ['jobs', ENGINE, ...API, 'views', 'connection'],
    "state imports only state, http and util: its inputs are structural, it reads no API's types.",
  ),
  ...layer(
    ['src/core/jobs/**/*.ts'],
    [ENGINE, ...API, 'views', 'connection'],
    'The job model (core/jobs) is owned by no API: each API folder maps its shapes into it, never the reverse.',
  ),
  ...layer(
    ['src/core/engine/**/*.ts'],
    ['state', ...API, 'views', 'connection'],
    "engine holds the engine's wire protocol shared by the API folders that speak it: no API folder, no state, no view.",
  ),
  ...layer(
    ['src/core/v2/**/*.ts'],
    ['v1', 'comfyui', ENGINE, 'router', 'workflowSchema', 'views', 'connection'],
    'An API folder imports no view, no connection, and no other API folder.',
  ),
  // v1 (the deprecated API) shares the service's error classes and the download into a folder with v2 through http/.
  ...layer(
    ['src/core/v1/**/*.ts'],
    ['v2', 'comfyui', 'router', 'workflowSchema', 'views', 'connection'],
    'An API folder imports no view, no connection, and no other API folder.',
  ),
  // A ComfyUI server's native API shares the engine's protocol with v1 through engine/, never v1 itself.
  ...layer(
    ['src/core/comfyui/**/*.ts'],
    ['v1', 'v2', 'router', 'workflowSchema', 'views', 'connection'],
    'An API folder imports no view, no connection, and no other API folder.',
  ),
  ...layer(
    ['src/core/router/**/*.ts'],
    ['v1', 'v2', 'comfyui', ENGINE, 'workflowSchema', 'views', 'connection'],
    'An API folder imports no view, no connection, and no other API folder.',
  ),
  ...layer(
    ['src/core/workflowSchema/**/*.ts'],
    ['v1', 'v2', 'comfyui', ENGINE, 'router', 'views', 'connection'],
    'An API folder imports no view, no connection, and no other API folder.',
  ),
  // The conversion of UI-format workflows and images reads the node definitions (workflowSchema); no API, no job.
  ...layer(
    ['src/core/convert/**/*.ts'],
    ['state', 'jobs', ENGINE, ...API.filter((a) => a !== 'workflowSchema'), 'views', 'connection'],
    'convert reads workflows and node definitions only (util, http, workflowSchema): no API client, no job, no view.',
  ),
  // The workflow graph (model, run states, problems, its webview protocol): reads workflows, node definitions, the
  // conversion's UI reader and the job model; no API client, no stored state, no view, no connection.
  ...layer(
    ['src/core/graph/**/*.ts'],
    ['http', 'state', ENGINE, ...API.filter((a) => a !== 'workflowSchema'), 'views', 'connection'],
    'graph reads workflows (util, convert, workflowSchema), the job model (jobs) and http/errors only: no API folder, no state, no view, no connection.',
    ['http/errors'],
  ),
  // A batch (a workflow and its variations, its durable records, the run that drives them) builds on the v2 job
  // service (its submissions, assets and reconciliation), state and the job model; no view, no connection, no other API.
  ...layer(
    ['src/core/batch/**/*.ts'],
    ['v1', 'comfyui', ENGINE, 'router', 'workflowSchema', 'views', 'connection'],
    'batch reads v2, jobs, state, http and util: no view, no connection, no other API folder.',
  ),
  ...layer(
    ['src/core/views/**/*.ts'],
    [ENGINE, ...API, 'convert', 'connection'],
    'The views read jobs, state, http and util, never an API folder: the API maps its shapes into the job model.',
  ),
  ...features(),
  // Which API a connection speaks is decided in one place: core/backends (createBackend) builds its job backend. Only
  // it (besides the API folders themselves and the emulator) may import both v1/ and v2/; connection reads v2's
  // surfaces only.
  ...layer(
    ['src/core/backends/**/*.ts'],
    ['router', 'workflowSchema', 'views', 'batch', 'convert', 'graph'],
    "backends builds a connection's job backend from the API folders (v1, v2), jobs, state, http and util: no view, no batch, no router.",
  ),
  ...layer(
    ['src/core/connection/**/*.ts'],
    ['v1', 'comfyui', ENGINE, 'jobs', 'router', 'workflowSchema', 'views', 'batch', 'backends'],
    "connection reads v2's surfaces, http and util only: a connection becomes a backend in core/backends.",
  ),
  // The CLI speaks to a connection through the job backend that core/backends builds, never to an API folder's deep
  // modules; and one module per command: a command imports no other command (what two share lives in src/cli).
  ...cli(['src/cli/**/*.ts'], []),
  ...cli(
    ['src/cli/commands/**/*.ts'],
    [
      {
        regex: '^\\./',
        message:
          'A command module imports no other command module: what two commands share lives in src/cli (options.ts, batchRun.ts, follow.ts, …).',
      },
    ],
  ),
  // The emulator is a server of its own: it imports the core's shared pieces, never the extension nor the CLI (the
  // CLI starts it, not the other way round).
  {
    files: ['src/emulator/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [NO_VSCODE],
          patterns: [
            {
              regex: '^(?:\\.\\./)+(?:extension|cli)(?:/|$)',
              message: 'The emulator imports the core only: never src/extension nor src/cli.',
            },
          ],
        },
      ],
    },
  },
  // Webview scripts run in the page: they import the core's pure modules (the view models, progress, the graph), never
  // the extension host, the CLI, the emulator nor vscode.
  {
    files: ['media/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'vscode', message: 'A webview script runs in the page: no vscode.' }],
          patterns: [
            {
              regex: '^(?:\\.\\./)+src/(?:extension|cli|emulator)(?:/|$)',
              message:
                "A webview script imports only the core's pure modules (src/core), never the host, the CLI or the emulator.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        Buffer: 'readonly',
      },
    },
  },
);
