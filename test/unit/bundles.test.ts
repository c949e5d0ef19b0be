// The extension's production build splits the code (esbuild.mjs): command modules (dist/lib/ext-*.js) and the
// downloads (dist/lib/core-download.js) are required at first use and take the core from the one shared
// dist/lib/core.js. A name such a chunk imports from the core must then be exported by the core index, or it would
// be undefined at run time, silently: these tests read the sources and check it.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as core from '../../src/core';

const root = path.resolve(__dirname, '../../..');

/** Value names imported by `file` from relative modules, except those in `keep` (bundled into the chunk). */
function relativeValueImports(file: string, keep: readonly string[]): Array<{ name: string; from: string }> {
  const src = fs.readFileSync(path.join(root, file), 'utf8');
  const found: Array<{ name: string; from: string }> = [];
  for (const m of src.matchAll(/^(?:import|export) (type )?\{([^}]*)\} from '(\.\.?\/[^']+)';/gm)) {
    if (m[1] || keep.includes(m[3]!)) continue;
    for (const part of m[2]!.split(',').map((p) => p.trim()).filter(Boolean)) {
      if (part.startsWith('type ')) continue;
      found.push({ name: part.split(/\s+as\s+/)[0]!, from: m[3]! });
    }
  }
  return found;
}

/**
 * The chunk of the core folder `src/core/<folder>/`, whose modules esbuild.mjs lists in `const <keepConst> = [...]`:
 * asserts every module of the folder is in the list (one left out would resolve to core.js, wrongly), and returns
 * the list, the folder's files and the values they import from the rest of the core. zodParts.ts is not read: the
 * build maps `./zodParts` to dist/lib/zod-mini.js.
 */
function folderChunk(folder: string, keepConst: string): { esbuild: string; keep: string[]; files: string[]; imports: Array<{ name: string; from: string }> } {
  const esbuild = fs.readFileSync(path.join(root, 'esbuild.mjs'), 'utf8');
  const keep = JSON.parse(new RegExp(`const ${keepConst} = (\\[[^\\]]*\\])`).exec(esbuild)![1]!.replace(/'/g, '"')) as string[];
  const files = fs.readdirSync(path.join(root, `src/core/${folder}`)).filter((f) => f.endsWith('.ts'));
  assert.deepEqual(files.map((f) => `./${f.replace(/\.ts$/, '')}`).filter((m) => m !== './index' && !keep.includes(m)), []);
  const imports = files.filter((f) => f !== 'zodParts.ts').flatMap((f) => relativeValueImports(`src/core/${folder}/${f}`, keep));
  return { esbuild, keep, files, imports };
}

/**
 * The lazy command modules esbuild.mjs lists (`LAZY_COMMANDS`), by their module name: the build's list still names the
 * job documents' provider (src/extension/jobDocumentsProvider.ts, loaded through `load()`) by its former name.
 */
function lazyCommands(esbuild: string): string[] {
  const names = JSON.parse(/const LAZY_COMMANDS = (\[[^\]]*\])/.exec(esbuild)![1]!.replace(/'/g, '"')) as string[];
  return names.map((name) => (name === 'jobDocuments' ? 'jobDocumentsProvider' : name));
}

describe('bundles: lazily loaded chunks share the one core', () => {
  it('every value the downloads chunk (src/core/v2/download.ts) imports from the core is exported by the core index', () => {
    const imports = relativeValueImports('src/core/v2/download.ts', ['../state/lockfile']);
    assert.ok(imports.length > 5, 'no imports found: the parser is broken');
    const missing = imports.filter(({ name }) => !(name in core));
    assert.deepEqual(missing, []);
  });

  it('every value the router chunk (src/core/router/, dist/lib/core-router.js) imports from the rest of the core is exported by the core index', () => {
    const { imports } = folderChunk('router', 'ROUTER_MODULES');
    assert.ok(imports.length > 5, 'no imports found: the parser is broken');
    assert.deepEqual(imports.filter(({ name }) => !(name in core)), []);
  });

  it('every value the v1 chunk (src/core/v1/, dist/lib/core-v1.js) imports from the rest of the core is exported by the core index; its lazy require of the downloads goes to their chunk', () => {
    const { esbuild, keep, files, imports } = folderChunk('v1', 'V1_MODULES');
    assert.ok(imports.length > 5, 'no imports found: the parser is broken');
    assert.deepEqual(imports.filter(({ name }) => !(name in core)), []);
    // A lazy require() of a core module not in the chunk must be one the build maps to its own chunk (core.js does
    // not export the downloads: `download().downloadIntoFolder` would be undefined at run time).
    const requires = files.flatMap((f) => [...fs.readFileSync(path.join(root, 'src/core/v1', f), 'utf8').matchAll(/require\('(\.\.?\/[^']+)'\)/g)].map((m) => m[1]!));
    assert.deepEqual(requires.filter((r) => !keep.includes(r)), ['../v2/download']);
    assert.match(esbuild, /filter: \/\^\(\\\.\\\.\\\/v2\|\\\.\)\\\/download\$\/ \}, \(args\) =>\n\s+args\.kind === 'require-call'[^\n]*'\.\/core-download\.js'/);
  });

  it('the core index exports no value of the router (its values load with the router chunk, not at activation)', () => {
    const src = fs.readFileSync(path.join(root, 'src/core/index.ts'), 'utf8');
    assert.doesNotMatch(src, /^export \* from '\.\/router/m);
    assert.doesNotMatch(src, /^export \{[^}]*\} from '\.\/router/m);
  });

  it('every value the workflow-schema chunk (src/core/workflowSchema/, dist/lib/core-workflowSchema.js) imports from the rest of the core is exported by the core index', () => {
    const { esbuild, imports } = folderChunk('workflowSchema', 'WORKFLOW_SCHEMA_MODULES');
    assert.match(esbuild, /workflowSchema: \{ entry: 'src\/core\/workflowSchema\/index\.ts', keep: WORKFLOW_SCHEMA_MODULES \}/);
    assert.ok(imports.length >= 3, 'no imports found: the parser is broken');
    assert.deepEqual(imports.filter(({ name }) => !(name in core)), []);
  });

  it('the core index exports no value of the workflow schema (it loads with workflow IntelliSense, not at activation)', () => {
    const src = fs.readFileSync(path.join(root, 'src/core/index.ts'), 'utf8');
    assert.doesNotMatch(src, /^export \* from '\.\/workflowSchema/m);
    assert.doesNotMatch(src, /^export \{[^}]*\} from '\.\/workflowSchema/m);
  });

  // Single-module chunks of the core, loaded by lazy command modules (`../core/<name>`): never at activation.
  for (const { name, keep, what } of [
    { name: 'jobDocuments', keep: ['./inputFile'], what: 'the job documents' },
    { name: 'inputFile', keep: [] as string[], what: 'the input files' },
  ]) {
    it(`${what} chunk (dist/lib/core-${name}.js) takes from the core index only what it exports, and nothing loaded at activation imports it`, () => {
      const esbuild = fs.readFileSync(path.join(root, 'esbuild.mjs'), 'utf8');
      assert.ok(esbuild.includes(`${name}: { entry: 'src/core/${name}.ts', keep: ${JSON.stringify(keep).replace(/"/g, "'")} }`), `LAZY_CORE.${name} is not as expected`);
      const imports = relativeValueImports(`src/core/${name}.ts`, keep);
      assert.ok(imports.length >= 3, 'no imports found: the parser is broken');
      assert.deepEqual(imports.filter(({ name: value }) => !(value in core)), []);
      const index = fs.readFileSync(path.join(root, 'src/core/index.ts'), 'utf8');
      assert.doesNotMatch(index, new RegExp(`^export (\\*|\\{[^}]*\\}) from '\\./${name}'`, 'm'));
      // No module of the core index (bundled into core.js) and no module of the extension's entry imports it.
      const statically = new RegExp(`^import (?!type )[^;]*from '(\\.\\.?/)+(core/)?${name}';`, 'm');
      const indexModules = [...index.matchAll(/^export \* from '\.\/([^']+)';/gm)].map((m) => m[1]!);
      const lazy = lazyCommands(esbuild);
      const eager = fs.readdirSync(path.join(root, 'src/extension')).filter((f) => f.endsWith('.ts') && !lazy.includes(f.replace(/\.ts$/, '')));
      const files = [
        ...indexModules.map((m) => (fs.existsSync(path.join(root, 'src/core', `${m}.ts`)) ? `src/core/${m}.ts` : `src/core/${m}/index.ts`)),
        ...eager.map((f) => `src/extension/${f}`),
      ];
      for (const file of files) assert.doesNotMatch(fs.readFileSync(path.join(root, file), 'utf8'), statically, file);
    });
  }

  it('the extension entry loads workflow IntelliSense only through load() (its modules are in the lazy workflowIntelliSense chunk)', () => {
    const src = fs.readFileSync(path.join(root, 'src/extension/extension.ts'), 'utf8');
    for (const module of ['./workflowIntelliSense', './workflowChecks', './nodeDefinitions', '../core/workflowSchema']) {
      assert.doesNotMatch(src, new RegExp(`^import (?!type )[^;]*from '${module.replace(/[./]/g, '\\$&')}';`, 'm'), `extension.ts imports ${module} statically`);
    }
    assert.match(src, /case '\.\/workflowIntelliSense': return require\('\.\/workflowIntelliSense'\);/);
  });

  it('the lazily loaded command modules import the core only through its index (../core)', () => {
    const esbuild = fs.readFileSync(path.join(root, 'esbuild.mjs'), 'utf8');
    const names = lazyCommands(esbuild);
    assert.ok(names.length >= 6);
    assert.ok(names.includes('monitor/monitorManager'), 'the job monitor is not loaded lazily');
    // The monitor's modules too (src/extension/monitor/, bundled into its chunk); only the pure monitor modules of the
    // core (protocol.ts, state.ts: not in the core index) are imported by path.
    const monitorFiles = fs.readdirSync(path.join(root, 'src/extension/monitor')).map((f) => `monitor/${f.replace(/\.ts$/, '')}`);
    for (const name of new Set([...names, ...monitorFiles])) {
      const src = fs.readFileSync(path.join(root, 'src/extension', `${name}.ts`), 'utf8');
      // `../core/router` is the router's own lazy chunk (dist/lib/core-router.js), shared too; so are the job documents'.
      assert.doesNotMatch(src, /from '(\.\.\/)+core\/(?!monitor\/|router'|workflowSchema'|jobDocuments'|inputFile')/, `${name}.ts imports a core module directly: it would get its own copy`);
    }
  });

  it('modules loaded at activation import the router core only as types (its values are in the lazy router chunk)', () => {
    const esbuild = fs.readFileSync(path.join(root, 'esbuild.mjs'), 'utf8');
    const names = lazyCommands(esbuild);
    for (const file of fs.readdirSync(path.join(root, 'src/extension')).filter((f) => f.endsWith('.ts') && !names.includes(f.replace(/\.ts$/, '')))) {
      const src = fs.readFileSync(path.join(root, 'src/extension', file), 'utf8');
      assert.doesNotMatch(src, /^import (?!type )[^;]*from '\.\.\/core\/router';/m, `${file} imports the router core statically`);
    }
  });

  it('the extension requires each lazy command module only inside load(), never with a static import', () => {
    const esbuild = fs.readFileSync(path.join(root, 'esbuild.mjs'), 'utf8');
    const names = lazyCommands(esbuild);
    for (const file of fs.readdirSync(path.join(root, 'src/extension')).filter((f) => f.endsWith('.ts'))) {
      const src = fs.readFileSync(path.join(root, 'src/extension', file), 'utf8');
      for (const name of names) {
        assert.doesNotMatch(src, new RegExp(`^import (?!type )[^;]*from '\\./${name}';`, 'm'), `${file} imports ./${name} statically`);
      }
    }
  });
});
