import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { VERSION } from '../../src/core/util';

const root = path.resolve(__dirname, '../../..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
// constants.ts imports nothing of vscode's at run time, only its own literals: read it as text so this plain
// Node test needs no vscode module.
const constants = fs.readFileSync(path.join(root, 'src/extension/platform/constants.ts'), 'utf8');

describe('manifest: package.json and the code agree', () => {
  it("the core's VERSION is package.json's version", () => {
    assert.equal(VERSION, pkg.version);
  });
  it('every command id in constants.ts is contributed, and every contributed command is in constants.ts', () => {
    const block = /export const Commands = \{([\s\S]*?)\}/.exec(constants)![1];
    const inCode = [...block.matchAll(/'([^']+)'/g)].map((m) => m[1]).sort();
    const contributed = (pkg.contributes.commands as { command: string }[]).map((c) => c.command).sort();
    assert.deepEqual(contributed, inCode);
  });
  it('every view id in constants.ts is contributed in the comfyCloud activity-bar container, and only those', () => {
    const block = /export const Views = \{([\s\S]*?)\}/.exec(constants)![1];
    const inCode = [...block.matchAll(/'([^']+)'/g)].map((m) => m[1]).sort();
    const container = /export const VIEW_CONTAINER = '([^']+)'/.exec(constants)![1];
    assert.deepEqual(
      pkg.contributes.viewsContainers.activitybar.map((c: { id: string }) => c.id),
      [container],
    );
    assert.deepEqual(Object.keys(pkg.contributes.views), [container]);
    assert.deepEqual(pkg.contributes.views[container].map((v: { id: string }) => v.id).sort(), inCode);
  });
  it("the view container's icon exists and ships in the .vsix", () => {
    const icon = pkg.contributes.viewsContainers.activitybar[0].icon as string;
    assert.ok(fs.existsSync(path.join(root, icon)), icon);
    assert.match(
      fs.readFileSync(path.join(root, '.vscodeignore'), 'utf8'),
      new RegExp(`^!${icon.replace(/[.]/g, '\\.')}$`, 'm'),
    );
  });
  it('every command named in a menu is contributed, and view menus name only contributed views', () => {
    const commands = new Set((pkg.contributes.commands as { command: string }[]).map((c) => c.command));
    const views = new Set(
      Object.values(pkg.contributes.views as Record<string, { id: string }[]>)
        .flat()
        .map((v) => v.id),
    );
    for (const [menu, items] of Object.entries(
      pkg.contributes.menus as Record<string, { command: string; when?: string }[]>,
    )) {
      for (const item of items) {
        assert.ok(commands.has(item.command), `${menu}: ${item.command} is not contributed`);
        for (const m of (item.when ?? '').matchAll(/view == ([\w.]+)/g))
          assert.ok(views.has(m[1]!), `${menu}: view ${m[1]} is not contributed`);
      }
    }
  });
  it('every setting in constants.ts is contributed under comfyCloud', () => {
    const block = /export const Settings = \{([\s\S]*?)\}/.exec(constants)![1];
    const inCode = [...block.matchAll(/'([^']+)'/g)].map((m) => `comfyCloud.${m[1]}`).sort();
    assert.deepEqual(Object.keys(pkg.contributes.configuration.properties).sort(), inCode);
  });
  it('comfyCloud.baseUrl is machine-scoped, so workspace settings cannot redirect the API key', () => {
    assert.equal(pkg.contributes.configuration.properties['comfyCloud.baseUrl'].scope, 'machine');
  });
  it('the connection settings are machine-scoped and restricted in untrusted workspaces (a workspace cannot choose where the key goes)', () => {
    for (const key of ['comfyCloud.connections', 'comfyCloud.activeConnection']) {
      assert.equal(pkg.contributes.configuration.properties[key].scope, 'machine', key);
      assert.ok(pkg.capabilities.untrustedWorkspaces.restrictedConfigurations.includes(key), key);
    }
  });
  it('comfyCloud.routerUrl is machine-scoped and restricted in untrusted workspaces (a workspace cannot choose where the router key goes)', () => {
    const setting = pkg.contributes.configuration.properties['comfyCloud.routerUrl'];
    assert.ok(setting, 'comfyCloud.routerUrl is contributed');
    assert.equal(setting.scope, 'machine');
    assert.ok(pkg.capabilities.untrustedWorkspaces.restrictedConfigurations.includes('comfyCloud.routerUrl'));
  });
  it('the router key is never a setting: no contributed setting (nor Settings constant) holds a key, token or secret; it lives in SecretStorage', () => {
    const secretLike = /key|token|secret|password|credential|bearer/i;
    const contributed = Object.keys(pkg.contributes.configuration.properties);
    assert.deepEqual(
      contributed.filter((k) => secretLike.test(k)),
      [],
    );
    const block = /export const Settings = \{([\s\S]*?)\}/.exec(constants)![1];
    assert.deepEqual(
      [...block.matchAll(/(\w+):\s*'([^']+)'/g)]
        .filter((m) => secretLike.test(m[1]!) || secretLike.test(m[2]!))
        .map((m) => m[2]),
      [],
    );
    // The key's home: SecretStorage under a prefix that is no setting name.
    const prefix = /export const ROUTER_SECRET_PREFIX = '([^']+)'/.exec(constants)?.[1];
    assert.ok(prefix, 'ROUTER_SECRET_PREFIX is declared');
    assert.ok(!contributed.some((k) => k.startsWith(prefix.replace(/:$/, ''))), prefix);
  });
  it("comfyCloud.connections' schema offers exactly the core's connection kinds", () => {
    const core = /CONNECTION_KINDS = \[([^\]]*)\]/.exec(
      fs.readFileSync(path.join(root, 'src/core/connection/connections.ts'), 'utf8'),
    )![1]!;
    const kinds = [...core.matchAll(/'([^']+)'/g)].map((m) => m[1]);
    assert.deepEqual(
      pkg.contributes.configuration.properties['comfyCloud.connections'].items.properties.surface.enum,
      kinds,
    );
  });
  it('the CLI and the hash worker ship in the .vsix (Start Local Emulator runs dist/cli.js emulator)', () => {
    const ignore = fs.readFileSync(path.join(root, '.vscodeignore'), 'utf8');
    for (const file of ['dist/cli.js', 'dist/hashWorker.js'])
      assert.match(ignore, new RegExp(`^!${file.replace(/[.]/g, '\\.')}$`, 'm'), file);
    assert.match(constants, /startEmulator: 'comfyCloud\.startEmulator'/);
  });
  it('engines.vscode ships a Node that satisfies the dependencies (undici 7 needs Node >= 20.18.1: VS Code >= 1.100)', () => {
    assert.match(pkg.engines.vscode, /^\^1\.(1\d\d)\./);
    assert.ok(Number(/^\^1\.(\d+)/.exec(pkg.engines.vscode)![1]) >= 100);
    assert.equal(
      pkg.devDependencies['@types/vscode'].replace(/^[~^]/, '').split('.').slice(0, 2).join('.'),
      pkg.engines.vscode.replace(/^\^/, '').split('.').slice(0, 2).join('.'),
    );
  });
});

/**
 * A `when` clause evaluated against `context` (enough of VS Code's grammar for the menus here: `||`, `&&`, `!`,
 * `key == value`, `key != value`, a bare key). Throws on anything else, so a clause it cannot read fails loudly.
 */
function when(clause: string, context: Record<string, string | boolean>): boolean {
  return clause.split('||').some((alternative) =>
    alternative.split('&&').every((raw) => {
      const term = raw
        .trim()
        .replace(/^\((.*)\)$/, '$1')
        .trim();
      const m = /^([\w.]+)\s*(==|!=)\s*([\w.]+)$/.exec(term);
      if (m) return (String(context[m[1]!] ?? '') === m[3]) === (m[2] === '==');
      const key = /^(!?)([\w.]+)$/.exec(term);
      if (!key) throw new Error(`cannot read the when clause term "${term}"`);
      return Boolean(context[key[2]!]) !== (key[1] === '!');
    }),
  );
}

/** VS Code's Marketplace categories (the values `vsce` accepts). */
const MARKETPLACE_CATEGORIES = [
  'AI',
  'Azure',
  'Chat',
  'Data Science',
  'Debuggers',
  'Education',
  'Extension Packs',
  'Formatters',
  'Keymaps',
  'Language Packs',
  'Linters',
  'Machine Learning',
  'Notebooks',
  'Other',
  'Programming Languages',
  'SCM Providers',
  'Snippets',
  'Testing',
  'Themes',
  'Visualization',
];

describe('manifest: the first minutes of a user', () => {
  const editorTitle = pkg.contributes.menus['editor/title'] as { command: string; when: string; group?: string }[];
  /** The ▶ buttons (a `$(play)` icon) the editor title shows in `context`. */
  const playButtons = (context: Record<string, string | boolean>): string[] => {
    const play = new Set(
      (pkg.contributes.commands as { command: string; icon?: string }[])
        .filter((c) => c.icon === '$(play)')
        .map((c) => c.command),
    );
    return editorTitle.filter((item) => play.has(item.command) && when(item.when, context)).map((item) => item.command);
  };

  it('one ▶ per file kind: a model input gets Run Model only, a workflow Submit Workflow only, another file none', () => {
    assert.deepEqual(playButtons({ resourceLangId: 'json', 'comfyCloud.modelInput': true }), ['comfyCloud.runModel']);
    assert.deepEqual(playButtons({ resourceLangId: 'json', 'comfyCloud.modelInput': false }), [
      'comfyCloud.submitWorkflow',
    ]);
    assert.deepEqual(playButtons({ resourceLangId: 'markdown', 'comfyCloud.modelInput': false }), []);
  });

  it('the extension activates at start-up finished (the status bar item is there before the sidebar is opened), never with "*"', () => {
    const events = pkg.activationEvents as string[];
    assert.ok(events.includes('onStartupFinished'), JSON.stringify(events));
    assert.ok(!events.includes('*'), 'activation on "*" delays the start-up of VS Code');
  });

  it('the Marketplace: categories that fit (from its list, not "Other"), keywords people search', () => {
    const categories = pkg.categories as string[];
    assert.ok(categories.length > 0);
    for (const c of categories) assert.ok(MARKETPLACE_CATEGORIES.includes(c), `not a Marketplace category: ${c}`);
    assert.ok(!categories.includes('Other'), 'categories: "Other" says nothing');
    const keywords = (pkg.keywords as string[]).map((k) => k.toLowerCase());
    for (const k of ['comfyui', 'stable diffusion', 'workflow'])
      assert.ok(keywords.includes(k), `keyword ${k} missing`);
    assert.ok(keywords.length <= 30, 'the Marketplace takes at most 30 keywords');
  });

  it('a CHANGELOG.md ships in the .vsix and tells the current version', () => {
    const changelog = fs.readFileSync(path.join(root, 'CHANGELOG.md'), 'utf8');
    assert.match(changelog, new RegExp(`^## \\[?${pkg.version.replace(/[.]/g, '\\.')}\\]?`, 'm'));
    assert.match(fs.readFileSync(path.join(root, '.vscodeignore'), 'utf8'), /^!CHANGELOG\.md$/m);
  });

  it("the README's first screen: title, one sentence, the two commands (demo, tests), then a picture of the extension in use that ships in the .vsix (a PNG under 300 KB)", () => {
    const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
    const lines = readme.split('\n');
    assert.match(lines[0]!, /^# /);
    const fence = lines.findIndex((l) => l.startsWith('```'));
    assert.ok(fence > 0 && fence < 8, 'the commands come right after the title and its intro');
    const block = lines.slice(fence + 1, lines.indexOf('```', fence + 1)).join('\n');
    assert.match(block, /npm run demo/);
    assert.match(block, /npm test/);
    const image = /!\[[^\]]+\]\(([^)\s]+\.png)\)/.exec(lines.slice(0, 30).join('\n'));
    assert.ok(image, 'no picture within the first 30 lines of the README');
    const file = path.join(root, image[1]!);
    assert.ok(fs.statSync(file).size < 300 * 1024, `${image[1]} is ${fs.statSync(file).size} bytes`);
    assert.match(
      fs.readFileSync(path.join(root, '.vscodeignore'), 'utf8'),
      new RegExp(`^!${image[1]!.replace(/[.]/g, '\\.')}$`, 'm'),
      `${image[1]} is not in the .vsix`,
    );
  });

  it('comfyCloud.monitor.reuseTab is a boolean, on by default, not a machine setting', () => {
    const setting = pkg.contributes.configuration.properties['comfyCloud.monitor.reuseTab'];
    assert.equal(setting.type, 'boolean');
    assert.equal(setting.default, true);
    assert.equal(setting.scope, 'window');
  });
});
