/**
 * The `comfy-cloud` command: a thin shell over the client core, wired here as `@vscode/vsce` wires its commands
 * with commander: this module builds the program and its global options, the one shared context (context.ts),
 * registers every command (one module each under commands/), parses, and turns errors into exit codes. main.ts is
 * the process entry point. `runCli` takes its streams, environment and abort signal as arguments, so tests run it
 * in-process.
 *
 * Exit codes: 0 success; 1 an API or network error, or a watched job that ended other than `succeeded`;
 * 2 bad usage (no command too), or a bad input file refused before any request; 130 interrupted.
 * stdout carries results only (output.ts): `submit` prints the job id first, then with `--wait --out` each path
 * written; `download` the path written; with `--json`, exactly one JSON document (an error too). A batch
 * (`submit --set`, `batch run`, `batch resume`: batchRun.ts) prints its batch id first, then a line per job as it ends;
 * with `--json`, JSON Lines: `{"batchId"}` first, then one object per job. Progress and
 * messages go to stderr (`--quiet` silences them). Global options may stand anywhere on the command line.
 */
import { Command, CommanderError, Option } from 'commander';
import { AbortError, InputError } from '../core';
import { Redactor, VERSION } from '../core/util';
import * as asset from './commands/asset';
import * as batch from './commands/batch';
import * as cancel from './commands/cancel';
import * as convert from './commands/convert';
import * as deleteAsset from './commands/deleteAsset';
import * as download from './commands/download';
import * as emulator from './commands/emulator';
import * as forget from './commands/forget';
import * as jobs from './commands/jobs';
import * as models from './commands/models';
import * as objectInfo from './commands/objectInfo';
import * as status from './commands/status';
import * as submit from './commands/submit';
import * as upload from './commands/upload';
import * as watch from './commands/watch';
import * as workflow from './commands/workflow';
import { createContext, type CliContext, type CliIo, type GlobalOptions } from './context';
import { Exit, Output, UsageError } from './output';
import { collect } from './options';

export { Exit } from './output';
export { readWorkflowFile } from '../core/util/inputFile';
export { parseInputOption } from './options';
export type { CliIo, EmulatorCliOptions } from './context';

/** A command module: registers its one command on the program. */
export interface CommandModule {
  register(program: Command, ctx: CliContext): Command;
}

/** Every command, in the order `--help` lists them. A command module not in this list is not reachable. */
export const COMMANDS: readonly CommandModule[] = [
  submit,
  batch,
  convert,
  upload,
  asset,
  deleteAsset,
  jobs,
  forget,
  status,
  watch,
  cancel,
  workflow,
  download,
  models,
  objectInfo,
  emulator,
];

/**
 * Runs the CLI with `argv` (without the node and script paths) and returns the exit code (see the module comment).
 * Never throws for a failure of a command: it is reported on stderr (and stdout with `--json`).
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const redactor = new Redactor();
  if (io.env.COMFY_API_KEY) redactor.add(io.env.COMFY_API_KEY);
  if (io.env.COMFY_ROUTER_KEY) redactor.add(io.env.COMFY_ROUTER_KEY);
  if (io.env.COMFY_PARTNER_KEY) redactor.add(io.env.COMFY_PARTNER_KEY);

  const program = new Command('comfy-cloud')
    .description('Run ComfyUI workflows on the Comfy job service (v2 Job and Asset API).')
    .version(VERSION)
    .addOption(
      new Option(
        '--base-url <url>',
        'server base URL (env COMFY_BASE_URL; default: a running self-hosted companion, else http://127.0.0.1:8189)',
      ),
    )
    .addOption(
      new Option(
        '--deployment <id>',
        'a serverless deployment by its id, at its own host https://<id>.run.comfy.app (env COMFY_DEPLOYMENT); the base URL is then not used',
      ),
    )
    .addOption(
      new Option(
        '--deployment-domain <host>',
        'the domain deployments are hosts under: run.comfy.app (default), stg.run.comfy.app for staging, localhost:<port> for an emulator run with it (env COMFY_DEPLOYMENT_DOMAIN); with `emulator`: serve deployments at <id>.<host>',
      ),
    )
    .addOption(
      new Option('--api-key <key>', 'API key, sent as a Bearer token to the base URL only (env COMFY_API_KEY)'),
    )
    .addOption(
      new Option('--timeout <ms>', 'time allowed for an answer to start, and between two bytes of it, in ms').default(
        '30000',
      ),
    )
    .addOption(
      new Option(
        '--router-url <url>',
        'model router base URL (env COMFY_ROUTER_URL; the emulator serves one at <origin>/router)',
      ),
    )
    // Accumulated: a client sends the last one given; `emulator` accepts each of them (a global option is consumed by
    // the program wherever it stands, so the emulator's repeatable --router-key is this one).
    .addOption(
      new Option(
        '--router-key <key>',
        'model router key, sent as a Bearer token to the router URL only (env COMFY_ROUTER_KEY); with `emulator`: a key its router accepts (repeatable)',
      )
        .argParser(collect)
        .default([] as string[], 'none'),
    )
    .addOption(
      new Option(
        '--api <version>',
        'which API: v2 (default), v1 (the deprecated one) or comfyui (a ComfyUI server) (env COMFY_API); every command runs on each, and says what an API cannot do',
      ),
    )
    .addOption(new Option('--json', 'print results (and errors) as one JSON document on stdout'))
    .addOption(new Option('--quiet', 'no progress or messages on stderr (results and errors still print)'))
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });
  const output = new Output({
    stdout: io.stdout,
    stderr: io.stderr,
    redactor,
    flags: () => program.opts<GlobalOptions>(),
  });
  program.hook('preAction', () => {
    // The key given on the command line is a secret too, from the moment it is parsed.
    const { apiKey, routerKey } = program.opts<GlobalOptions>();
    if (apiKey) redactor.add(apiKey);
    for (const key of routerKey) redactor.add(key);
    // A bad --api is bad usage before any request, whichever the command. What the API cannot do is refused by the
    // command, by its backend's capabilities (capabilities.ts), never by the API's name.
    ctx.api();
  });

  const ctx = createContext(program, io, output, redactor);
  for (const command of COMMANDS) command.register(program, ctx);

  if (argv.length === 0) {
    // No command: the help, on stderr, and the usage exit code (a script that forgot its command fails).
    program.outputHelp({ error: true });
    return Exit.usage;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return ctx.exitCode;
  } catch (e) {
    return reportError(e, output);
  } finally {
    // The clients the run built (one model router client at most) are released once the command ended.
    await ctx.close();
  }
}

/**
 * Reports an error that ended a command and returns its exit code: commander's own (help and version are success;
 * anything else bad usage, already printed by commander), UsageError and a bad input file 2, an abort 130, any other
 * error 1. With `--json`, the error is also one JSON document on stdout.
 */
function reportError(e: unknown, output: Output): number {
  if (e instanceof CommanderError) {
    if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version') return Exit.ok;
    // Commander has printed its own message (or the help, when a command is missing) on stderr.
    if (output.json) output.document({ error: { code: 'usage', message: e.message.replace(/^error: /, '') } });
    return Exit.usage;
  }
  if (e instanceof UsageError) return output.error(e, Exit.usage);
  if (AbortError.is(e)) {
    output.warn('interrupted');
    if (output.json) output.document({ error: { code: 'aborted', message: 'interrupted' } });
    return Exit.interrupted;
  }
  // Bad input refused before any request: the usage exit code.
  if (InputError.is(e)) return output.error(e, Exit.usage);
  return output.error(e, Exit.failed);
}
