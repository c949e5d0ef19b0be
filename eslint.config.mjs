// Lint: the recommended JavaScript and TypeScript rules, no floating promise in src/ (type-aware), plus a guard that
// the client core, CLI and emulator never import `vscode` (they run in plain Node).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
    rules: { 'no-restricted-imports': ['error', { paths: [{ name: 'vscode', message: 'Only src/extension may import vscode.' }] }] },
  },
  {
    // Imports point one way: the job model (core/jobs) is owned by no API, and the core's views of jobs (the Jobs
    // tree's model, the monitor, the end-of-job notice) read it, never an API folder's own shapes. Each API folder maps
    // its shapes into the model.
    files: ['src/core/jobs/**/*.ts', 'src/core/views/jobTree.ts', 'src/core/views/jobEndNotice.ts', 'src/core/views/monitor/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'vscode', message: 'Only src/extension may import vscode.' }],
          patterns: [{ group: ['**/v1', '**/v1/*', '**/v2', '**/v2/*', '**/router', '**/router/*'], message: 'The job model and its views read core/jobs, never an API folder: the API maps its shapes into the model.' }],
        },
      ],
    },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', Buffer: 'readonly' } },
  },
);
