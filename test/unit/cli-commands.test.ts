/**
 * The CLI's layout (one module per command, wired in one place): every module under
 * src/cli/commands registers exactly one command, named for its file, and the wiring (cli.ts) registers them all,
 * so a command module left out of the wiring, or a command defined outside a module, fails here.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command } from 'commander';
import { Redactor } from '../../src/core/util';
import type { CommandModule } from '../../src/cli/cli';
import { createContext, type CliContext, type CliIo } from '../../src/cli/context';
import { Output } from '../../src/cli/output';
import { Buffered, cliRunner } from './harness';
import { tempDir } from './tmp';

/** The command modules' sources (out/test/unit → the repository's src/cli/commands), by file name without `.ts`. */
const sourceDir = path.join(__dirname, '..', '..', '..', 'src', 'cli', 'commands');
const moduleNames = fs
  .readdirSync(sourceDir)
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
  .map((f) => f.slice(0, -'.ts'.length))
  .sort();

/** The command a module is named for: `deleteAsset` → `delete-asset`. */
const kebab = (name: string): string => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** A fresh program with a real context (nothing is run: registering makes no request). */
function freshProgram(): { program: Command; ctx: CliContext } {
  const program = new Command('comfy-cloud');
  const io: CliIo = { stdout: new Buffered(), stderr: new Buffered(), env: {} };
  const redactor = new Redactor();
  return {
    program,
    ctx: createContext(
      program,
      io,
      new Output({ stdout: io.stdout, stderr: io.stderr, redactor, flags: () => ({}) }),
      redactor,
    ),
  };
}

/** The command names listed under "Commands:" in a help text (commander's own `help` left out). */
function listedCommands(help: string, { sorted = true } = {}): string[] {
  const section = help.split(/^Commands:$/m)[1] ?? '';
  const names = section
    .split('\n')
    .map((line) => /^ {2}(\S+)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined && name !== 'help');
  return sorted ? names.sort() : names;
}

describe('CLI layout: one module per command, all wired', () => {
  const cli = cliRunner(tempDir('cc-cli-commands-'));

  it('every module under src/cli/commands registers exactly one command, named for its file', () => {
    assert.ok(moduleNames.length >= 12, `command modules found: ${moduleNames.join(', ')}`);
    for (const name of moduleNames) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const mod = require(`../../src/cli/commands/${name}`) as Partial<CommandModule>;
      assert.equal(typeof mod.register, 'function', `${name}.ts exports no register(program, ctx)`);
      const { program, ctx } = freshProgram();
      const registered = mod.register!(program, ctx);
      assert.equal(program.commands.length, 1, `${name}.ts registers ${program.commands.length} commands`);
      assert.equal(program.commands[0], registered, `${name}.ts returns the command it registered`);
      assert.equal(registered.name(), kebab(name), `${name}.ts registers "${registered.name()}"`);
    }
  });

  it('comfy-cloud --help lists exactly the command modules (one left out of the wiring fails)', async () => {
    const r = await cli(['--help']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(listedCommands(r.stdout), moduleNames.map(kebab).sort());
  });

  it('comfy-cloud --help lists the commands in the same order as before the split (batch and convert after submit; models and object-info before emulator)', async () => {
    const r = await cli(['--help']);
    assert.deepEqual(listedCommands(r.stdout, { sorted: false }), [
      'submit',
      'batch',
      'convert',
      'upload',
      'asset',
      'delete-asset',
      'jobs',
      'forget',
      'status',
      'watch',
      'cancel',
      'workflow',
      'download',
      'models',
      'object-info',
      'emulator',
    ]);
  });
});
