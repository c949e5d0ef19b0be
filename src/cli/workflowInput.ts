/**
 * What `convert` and `submit` share: the node definitions a conversion needs, and the API-format workflow a file
 * gives (a workflow JSON file in API or UI format, or a PNG image that carries its workflow).
 *
 * Rules:
 * - the job service runs API format only (Job and Asset API v2, POST /api/v2/jobs, rule 2: a UI-format workflow is
 *   refused with `workflow_format_ui`): nothing in UI format is ever sent; a UI-format workflow is converted first
 *   only when asked (`submit --convert`), else refused before any request, naming `--convert` as the fix;
 * - an image sends its `prompt` chunk, the exact graph that made it; an image with only a `workflow` chunk (UI format)
 *   needs `--convert`;
 * - node definitions: `--object-info FILE` (a saved `GET /object_info` map), else a ComfyUI engine at
 *   `--node-definitions-url`, else the connection's `GET /api/object_info`; fetched ones are cached under the state
 *   folder (one file per source, as workflow IntelliSense caches them) and fetched again with `--refresh-definitions`.
 *   Where they came from is said on stderr.
 */
import * as path from 'node:path';
import { ApiError, InputError } from '../core';
import { defaultStateDir } from '../core/state';
import { userAgent, type ApiWorkflow } from '../core/util';
import { convertUiWorkflow } from '../core/convert/uiToApi';
import { readWorkflowInput, type WorkflowInput } from '../core/convert/input';
import {
  MAX_OBJECT_INFO_BYTES,
  NodeDefinitionsCache,
  httpObjectInfoFetch,
  nodeDefinitionSource,
} from '../core/workflowSchema/definitionsSource';
import { parseObjectInfo, type NodeDefinitions } from '../core/workflowSchema/objectInfo';
import { readInputFile } from '../core/util/inputFile';
import { assertApiWorkflow, isPlainObject } from '../core/util/workflow';
import type { CliContext } from './context';
import { UsageError, shown } from './output';

/** The options of the commands that may convert (commander's names). */
export interface DefinitionsOptions {
  /** `--object-info FILE`: a saved `GET /object_info` map. */
  objectInfo?: string;
  /** `--node-definitions-url URL`: a ComfyUI engine used only for its node definitions. */
  nodeDefinitionsUrl?: string;
  /** `--refresh-definitions`: fetch the definitions again instead of using the cached ones. */
  refreshDefinitions?: boolean;
}

/** The folder of cached node definitions, under the state folder the CLI shares with the extension. */
export function definitionsCacheDir(env: NodeJS.ProcessEnv): string {
  return path.join(defaultStateDir(env), 'node-definitions');
}

function classCount(definitions: NodeDefinitions): string {
  return `${definitions.classes.size} node class${definitions.classes.size === 1 ? '' : 'es'}`;
}

/**
 * The node definitions of a conversion (see the module's rules), said on stderr.
 * @throws InputError `bad_json`, `too_large`, `unreadable`… for a bad `--object-info` file, `no_node_definitions` when
 *   it (or the server's answer) holds no node class, or the server does not serve `object_info` (404); UsageError for a
 *   `--node-definitions-url` that is not an http(s) URL; the transport's errors (ApiError, ConnectionError) otherwise.
 */
export async function loadNodeDefinitions(ctx: CliContext, opts: DefinitionsOptions): Promise<NodeDefinitions> {
  const { io, output } = ctx;
  if (opts.objectInfo) {
    const file = opts.objectInfo;
    const text = await readInputFile(file, { maxBytes: MAX_OBJECT_INFO_BYTES });
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      throw new InputError(
        'bad_json',
        `--object-info ${path.basename(file)} is not valid JSON (${(e as Error).message}); save the engine's GET /object_info answer again.`,
      );
    }
    const definitions = parseObjectInfo(value);
    if (definitions.classes.size === 0)
      throw noDefinitions(
        `--object-info ${path.basename(file)} holds no node definitions: expected the map GET /object_info answers (class name → definition)`,
      );
    output.message(`node definitions: ${file} (${classCount(definitions)})`);
    return definitions;
  }
  const server = await ctx.server();
  let source;
  try {
    source = nodeDefinitionSource(opts.nodeDefinitionsUrl, { name: server.baseUrl, baseUrl: server.baseUrl });
  } catch (e) {
    throw new UsageError(
      `--node-definitions-url: ${(e as Error).message.replace(/^comfyCloud\.nodeDefinitionsUrl /, '')}`,
    );
  }
  const cache = new NodeDefinitionsCache(definitionsCacheDir(io.env));
  const cached = opts.refreshDefinitions ? undefined : await cache.load(source);
  if (cached) {
    const definitions = parseObjectInfo(cached.objectInfo);
    output.message(
      `node definitions: ${source.url}, cached ${new Date(cached.fetchedAt).toISOString()} in ${cache.fileOf(source)} (${classCount(definitions)}; --refresh-definitions fetches them again)`,
    );
    return definitions;
  }
  let objectInfo: unknown;
  try {
    objectInfo = await httpObjectInfoFetch({ source, apiKey: server.apiKey, userAgent: userAgent('cli') })(
      io.signal ?? new AbortController().signal,
    );
  } catch (e) {
    if (ApiError.is(e) && e.status === 404) {
      throw noDefinitions(
        `${source.url} does not serve GET ${source.kind === 'engine' ? '/object_info' : '/api/object_info'}, so the conversion has no node definitions: give them with --object-info FILE (a saved GET /object_info answer), or --node-definitions-url URL of a ComfyUI engine`,
      );
    }
    throw e;
  }
  const definitions = parseObjectInfo(objectInfo);
  if (definitions.classes.size === 0)
    throw noDefinitions(`${source.url}'s object_info holds no node definitions; give them with --object-info FILE`);
  await cache
    .save(source, objectInfo, Date.now())
    .catch((e: Error) => output.warn(`warning: the node definitions were not cached: ${shown(e.message)}`));
  output.message(
    `node definitions: fetched from ${source.url}${source.kind === 'engine' ? '/object_info' : '/api/object_info'} (${classCount(definitions)}), cached in ${cache.fileOf(source)}`,
  );
  return definitions;
}

function noDefinitions(message: string): InputError {
  return new InputError('no_node_definitions', message);
}

/** The number of nodes of an API-format graph, for a message. */
function nodeCount(workflow: ApiWorkflow): string {
  const n = Object.keys(workflow).length;
  return `${n} node${n === 1 ? '' : 's'}`;
}

/**
 * Converts a UI-format workflow with the node definitions ({@link loadNodeDefinitions}) and says so on stderr:
 * "converted UI-format workflow (N nodes) to API format".
 * @throws ConversionError (an InputError: `workflow_not_convertible` listing each node, `ui_workflow_malformed`), and
 *   what {@link loadNodeDefinitions} throws.
 */
export async function convertWithDefinitions(
  ctx: CliContext,
  workflow: unknown,
  opts: DefinitionsOptions,
): Promise<ApiWorkflow> {
  const definitions = await loadNodeDefinitions(ctx, opts);
  const converted = convertUiWorkflow(workflow, definitions);
  // Nothing in UI format is ever sent: a converter that answered something else is a bug, refused here.
  assertApiWorkflow(converted);
  ctx.output.message(`converted UI-format workflow (${nodeCount(converted)}) to API format`);
  return converted;
}

/** True when `value` is meant as a UI-format workflow: a top-level `nodes` key (the converter says what is wrong with it). */
function looksUi(value: unknown): boolean {
  return isPlainObject(value) && 'nodes' in value;
}

/**
 * The API-format workflow `submit` sends for `file` (see the module's rules): an API-format JSON file as it is; a
 * UI-format one converted with `convert` set, else refused; an image's `prompt` chunk, or with `convert` its
 * `workflow` chunk converted when it has no `prompt`. Read and checked before any request (the node definitions'
 * fetch aside, which happens only to convert).
 * @returns the API-format graph, and the UI-format workflow it came from where there is one (the file converted, or
 *   the image's `workflow` chunk): JobSubmitOptions.uiWorkflow.
 * @throws InputError before anything is sent: the file's (readWorkflowInput), `workflow_format_ui` naming `--convert`,
 *   `not_api_format`, the conversion's.
 */
export async function workflowToSubmit(
  ctx: CliContext,
  file: string,
  opts: DefinitionsOptions & { convert?: boolean },
): Promise<{ workflow: ApiWorkflow; uiWorkflow?: unknown }> {
  const name = path.basename(file);
  const input: WorkflowInput = await readWorkflowInput(file);
  if (input.kind === 'image') {
    const { prompt, workflow } = input.image;
    if (prompt !== undefined) {
      if (!isApi(prompt))
        throw new InputError(
          'not_api_format',
          `${name}: the image's "prompt" chunk is not an API-format graph; the image was not saved by ComfyUI, or its metadata was edited`,
        );
      ctx.output.message(`sending the image's prompt chunk: the API-format graph that made it (${nodeCount(prompt)})`);
      return { workflow: prompt, uiWorkflow: workflow };
    }
    if (!opts.convert)
      throw uiRefusal(`${name} carries only a UI-format workflow (a "workflow" chunk, no "prompt" chunk)`);
    ctx.output.message(`converting the image's workflow chunk (UI format)`);
    return { workflow: await convertWithDefinitions(ctx, workflow, opts), uiWorkflow: workflow };
  }
  if (input.format === 'api') return { workflow: input.workflow as ApiWorkflow };
  if (input.format === 'ui' || looksUi(input.workflow)) {
    if (!opts.convert)
      throw uiRefusal(`${name} is a UI-format workflow (the editor's save file, with "nodes" and "links")`);
    return { workflow: await convertWithDefinitions(ctx, input.workflow, opts), uiWorkflow: input.workflow };
  }
  assertApiWorkflow(input.workflow); // throws not_api_format
  return { workflow: input.workflow };
}

function isApi(value: unknown): value is ApiWorkflow {
  try {
    assertApiWorkflow(value);
    return true;
  } catch {
    return false;
  }
}

/** The refusal of a UI-format workflow without `--convert` (Job and Asset API v2, POST /api/v2/jobs, rule 2). */
function uiRefusal(what: string): InputError {
  return new InputError(
    'workflow_format_ui',
    `${what}. The job service runs API format only: run again with --convert to convert it first (with the server's node definitions, or --object-info FILE), or in ComfyUI use Workflow → Export (API).`,
  );
}
