/**
 * The REST routes of a ComfyUI server (ComfyUI server API (observed): Routes, Submitting, Reading state, Cancelling,
 * Files), over the emulator's job engine, one owner (no authentication):
 *
 * - POST /prompt `{prompt, client_id?, prompt_id?, extra_data?}` → 200 `{prompt_id, number, node_errors: {}}` (a
 *   client's `prompt_id` is the job's id); 400 `{error, node_errors}` (the check of v1/prompt.ts, in the engine's
 *   types); a body that is not JSON: 500 plain text;
 * - GET /prompt `{exec_info: {queue_remaining}}`; GET /queue `{queue_running, queue_pending}` of `[number, id, prompt,
 *   extra_data, outputs_to_execute]`; GET /history (`?max_items=N`: the newest N) and /history/{id} (`{}` unless
 *   ended); POST /queue `{delete}`/`{clear}`, POST /interrupt (`{prompt_id}`: that prompt only if it runs; else
 *   whatever runs), POST /history `{delete}`/`{clear}`, POST /free: 200 with an empty body;
 * - GET /view `?filename&subfolder&type` → the bytes, or 404 with an empty body; POST /upload/image and /upload/mask
 *   (v1/upload.ts) → `{name, subfolder, type}`, 400 with an empty body when refused;
 * - GET /object_info, /object_info/{class} (v1/objectInfo.ts: the emulator's nodes), /system_stats, /features,
 *   /embeddings, /extensions, /models.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isPlainObject } from '../../core/util/workflow';
import { readJson, sendJson } from '../http';
import type { Handler, Route } from '../router';
import type { AssetRecord, AssetStore } from '../v2/assets';
import type { JobStore } from '../v2/jobs';
import type { JobRunner } from '../v2/runner';
import { NODE_DEFINITIONS } from '../engine/nodes';
import { nodeInfo, objectInfo } from '../v1/objectInfo';
import { checkPrompt, PromptRefused } from '../v1/prompt';
import { receiveV1Upload, V1Refusal } from '../v1/upload';
import { asciiJson } from '../engine/png';
import { FEATURE_FLAGS } from './socket';
import { ended, type ComfyJob, type ComfyState } from './state';

/** The body of the server's 500 page (ComfyUI server API (observed), Submitting: a body that is not JSON). */
const SERVER_ERROR_TEXT = '500 Internal Server Error\n\nServer got itself in trouble';

/** Answers `status` with an empty body, as the server does (`application/octet-stream`, length 0). */
export function sendEmpty(res: ServerResponse, status: number): void {
  res.writeHead(status, { 'content-type': 'application/octet-stream', 'content-length': '0' });
  res.end();
}

/** Answers `status` with a plain-text body. */
export function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
  });
  res.end(text);
}

/** A refusal of the server's own making: answered as it is, never as an envelope. */
class Answered extends Error {
  constructor(readonly send: (res: ServerResponse) => void) {
    super('answered');
  }
}

/** The body as JSON, or the server's 500 page when it is not JSON. */
async function jsonBody(req: IncomingMessage, optional = false): Promise<unknown> {
  try {
    return await readJson(req, 'invalid_workflow', { optional });
  } catch {
    throw new Answered((res) => sendText(res, 500, SERVER_ERROR_TEXT));
  }
}

/** What the routes need. */
interface ComfyRouteDeps {
  readonly state: ComfyState;
  readonly jobs: JobStore;
  readonly assets: AssetStore;
  readonly runner: JobRunner;
  /** The one owner of everything submitted and uploaded here. */
  readonly owner: string;
}

/** A queue or history entry's `prompt`: `[number, id, prompt, extra_data, outputs_to_execute]`. */
function promptItem(job: ComfyJob): unknown[] {
  return [job.number, job.record.id, job.prompt, job.extraData, [...job.outputsToExecute]];
}

/** The history entry of an ended prompt (ComfyUI server API (observed), Reading state). */
function historyEntry(job: ComfyJob): Record<string, unknown> {
  const succeeded = job.lastStatus === 'succeeded';
  return {
    prompt: promptItem(job),
    outputs: Object.fromEntries([...job.outputs.entries()].map(([node, images]) => [node, { images }])),
    status: { status_str: succeeded ? 'success' : 'error', completed: succeeded, messages: job.messages },
    meta: Object.fromEntries(
      [...job.outputs.keys()].map((id) => [id, { node_id: id, display_node: id, parent_node: null, real_node_id: id }]),
    ),
  };
}

/** The ids a `{delete: [...]}` body names. */
function idsToDelete(body: unknown): string[] {
  return isPlainObject(body) && Array.isArray(body.delete)
    ? body.delete.filter((id): id is string => typeof id === 'string')
    : [];
}

/**
 * The tEXt chunks a submission's `extra_data.extra_pnginfo` adds to each PNG it saves: one per key, its value as JSON
 * (ComfyUI server API (observed): the frontend sends the UI-format graph as `extra_pnginfo.workflow`, and SaveImage
 * writes it as a `workflow` chunk). Keys a tEXt keyword cannot hold (1 to 79 printable Latin-1 characters) and
 * `prompt` (the graph as run, written by the runner) are left out.
 */
function pngTextOf(pngInfo: unknown): Record<string, string> | undefined {
  if (!isPlainObject(pngInfo)) return undefined;
  const entries = Object.entries(pngInfo).filter(([key]) => key !== 'prompt' && /^[\x20-\x7e]{1,79}$/.test(key));
  return entries.length === 0 ? undefined : Object.fromEntries(entries.map(([key, value]) => [key, asciiJson(value)]));
}

/** The routes, as patterns below the surface's prefix and the optional `/api`. */
export function comfyRoutes(deps: ComfyRouteDeps): Route[] {
  const { state, jobs, assets, runner, owner } = deps;

  const submit: Handler = async (req, res) => {
    const body = await jsonBody(req);
    let checked: ReturnType<typeof checkPrompt>;
    try {
      checked = checkPrompt(body, owner, state.files);
    } catch (e) {
      if (e instanceof PromptRefused) return sendJson(res, 400, e.body);
      throw e;
    }
    const given =
      isPlainObject(body) && typeof body.prompt_id === 'string' && body.prompt_id !== '' ? body.prompt_id : undefined;
    let record;
    try {
      record = jobs.create(owner, checked.prompt, checked.plan, null, undefined, given);
    } catch {
      return sendJson(res, 400, {
        error: {
          type: 'invalid_prompt',
          message: `prompt_id ${JSON.stringify(given)} is already a prompt's id: send a new one, or none`,
          details: '',
          extra_info: {},
        },
        node_errors: {},
      });
    }
    const extraData = isPlainObject(body) && isPlainObject(body.extra_data) ? { ...body.extra_data } : {};
    if (checked.clientId !== null) extraData.client_id = checked.clientId;
    record.pngText = pngTextOf(extraData.extra_pnginfo);
    const cacheKey = JSON.stringify(checked.prompt);
    const job: ComfyJob = {
      record,
      number: state.nextNumber(),
      prompt: checked.prompt,
      extraData,
      clientId: checked.clientId,
      outputsToExecute: checked.plan.steps.filter((s) => s.definition.isOutput).map((s) => s.nodeId),
      cacheKey,
      cached: state.cache.get(cacheKey),
      lastStatus: record.status,
      started: [],
      executed: [],
      pending: new Map(),
      outputs: new Map(),
      messages: [],
    };
    // Registered before it is queued: the scheduler may start it at once, and its first events must find it.
    state.jobs.set(record.id, job);
    // Queued: the job store publishes `queued`, which messages.ts answers with `status` to every socket.
    runner.submit(record);
    sendJson(res, 200, { prompt_id: record.id, number: job.number, node_errors: {} });
  };

  const queue: Handler = (_req, res) => {
    const all = [...state.jobs.values()];
    sendJson(res, 200, {
      queue_running: all
        .filter((j) => j.record.status === 'running' || j.record.status === 'canceling')
        .map(promptItem),
      queue_pending: all.filter((j) => j.record.status === 'queued').map(promptItem),
    });
  };

  const history: Handler = (_req, res, context) => {
    const done = [...state.jobs.values()].filter((j) => ended(j.lastStatus));
    const max = Number(context.query.get('max_items'));
    const newest = Number.isInteger(max) && max > 0 ? done.slice(-max) : done;
    sendJson(res, 200, Object.fromEntries(newest.map((j) => [j.record.id, historyEntry(j)])));
  };

  const historyOf: Handler = (_req, res, context) => {
    const job = state.jobs.get(context.params.id);
    // `{}` for queued, running, deleted or unknown alike.
    sendJson(res, 200, job !== undefined && ended(job.lastStatus) ? { [job.record.id]: historyEntry(job) } : {});
  };

  const deleteFromQueue: Handler = async (req, res) => {
    const body = await jsonBody(req);
    const ids = idsToDelete(body);
    const clear = isPlainObject(body) && body.clear === true;
    for (const job of [...state.jobs.values()])
      if (job.record.status === 'queued' && (clear || ids.includes(job.record.id))) runner.cancel(job.record);
    sendEmpty(res, 200);
  };

  const interrupt: Handler = async (req, res) => {
    const body = await jsonBody(req, true);
    const only = isPlainObject(body) && typeof body.prompt_id === 'string' ? body.prompt_id : undefined;
    // The engine stops between nodes: a node that runs finishes its current work first (runner.ts).
    for (const job of [...state.jobs.values()])
      if (job.record.status === 'running' && (only === undefined || job.record.id === only)) runner.cancel(job.record);
    sendEmpty(res, 200);
  };

  const deleteFromHistory: Handler = async (req, res) => {
    const body = await jsonBody(req);
    const ids = idsToDelete(body);
    const clear = isPlainObject(body) && body.clear === true;
    for (const job of [...state.jobs.values()])
      if (ended(job.lastStatus) && (clear || ids.includes(job.record.id))) state.jobs.delete(job.record.id);
    sendEmpty(res, 200);
  };

  /** The asset a file name stands for: named here, or (after a restart forgot the names) an asset of that name. */
  const fileAsset = (filename: string, type: string): AssetRecord | undefined => {
    const named = state.files.file(owner, filename);
    if (named !== undefined) return named.type === type ? assets.get(owner, named.assetId) : undefined;
    const saved = assets.saved().assets.find((a) => a.owner === owner && a.name === filename);
    const found = saved === undefined ? undefined : assets.get(owner, saved.id);
    const foundType = found?.jobId === null ? 'input' : 'output';
    return found !== undefined && (type === foundType || (type === 'temp' && foundType === 'output'))
      ? found
      : undefined;
  };

  const view: Handler = (_req, res, context) => {
    const filename = context.query.get('filename') ?? '';
    const type = context.query.get('type') || 'output';
    const asset = filename === '' ? undefined : fileAsset(filename, type);
    if (asset === undefined) return sendEmpty(res, 404);
    res.writeHead(200, {
      'content-type': asset.contentType,
      'content-disposition': `filename="${filename.replace(/["\\\r\n]/g, '_')}"`,
      'content-length': String(asset.sizeBytes),
      etag: `"${asset.hash.replace(/^blake3:/, '').slice(0, 16)}-${asset.sizeBytes.toString(16)}"`,
      'last-modified': new Date(asset.createdAt).toUTCString(),
      'accept-ranges': 'bytes',
    });
    fs.createReadStream(asset.file)
      .on('error', () => res.destroy())
      .pipe(res);
  };

  const upload =
    (mask: boolean): Handler =>
    async (req, res) => {
      try {
        sendJson(res, 200, await receiveV1Upload(req, owner, mask, assets, state.files));
      } catch (e) {
        if (e instanceof V1Refusal) return sendEmpty(res, 400);
        throw e;
      }
    };

  const systemStats: Handler = (_req, res) => {
    const ram = { total: os.totalmem(), free: os.freemem() };
    sendJson(res, 200, {
      system: {
        os: process.platform === 'win32' ? 'nt' : 'posix',
        ram_total: ram.total,
        ram_free: ram.free,
        comfyui_version: 'emulator',
        // No web frontend and no templates are served here.
        required_frontend_version: 'none',
        installed_templates_version: null,
        required_templates_version: 'none',
        python_version: `none (the Comfy Cloud emulator on Node ${process.version})`,
        pytorch_version: 'none',
        embedded_python: false,
        argv: process.argv.slice(1),
      },
      // No GPU: the emulator's nodes run on the CPU and need no weights.
      devices: [
        {
          name: 'cpu',
          type: 'cpu',
          index: null,
          vram_total: ram.total,
          vram_free: ram.free,
          torch_vram_total: ram.total,
          torch_vram_free: ram.free,
        },
      ],
    });
  };

  const route = (method: string, pattern: string, name: string, handler: Handler): Route => ({
    method,
    pattern,
    name,
    handler,
  });
  return [
    route('POST', '/prompt', 'comfyPrompt', submit),
    route('GET', '/prompt', 'comfyPromptInfo', (_req, res) =>
      sendJson(res, 200, { exec_info: { queue_remaining: state.remaining() } }),
    ),
    route('GET', '/queue', 'comfyQueue', queue),
    route('POST', '/queue', 'comfyQueueDelete', deleteFromQueue),
    route('GET', '/history', 'comfyHistory', history),
    route('GET', '/history/{id}', 'comfyHistoryOf', historyOf),
    route('POST', '/history', 'comfyHistoryDelete', deleteFromHistory),
    route('POST', '/interrupt', 'comfyInterrupt', interrupt),
    route('POST', '/free', 'comfyFree', (_req, res) => sendEmpty(res, 200)),
    route('GET', '/view', 'comfyView', view),
    route('POST', '/upload/image', 'comfyUploadImage', upload(false)),
    route('POST', '/upload/mask', 'comfyUploadMask', upload(true)),
    route('GET', '/object_info', 'comfyObjectInfo', (_req, res) =>
      sendJson(res, 200, objectInfo(state.files.inputNames(owner))),
    ),
    route('GET', '/object_info/{class}', 'comfyObjectInfoClass', (_req, res, context) => {
      const definition = NODE_DEFINITIONS.get(context.params.class);
      sendJson(
        res,
        200,
        definition === undefined ? {} : { [definition.classType]: nodeInfo(definition, state.files.inputNames(owner)) },
      );
    }),
    route('GET', '/system_stats', 'comfySystemStats', systemStats),
    route('GET', '/features', 'comfyFeatures', (_req, res) => sendJson(res, 200, { ...FEATURE_FLAGS })),
    // No weights, no embeddings, no extensions of the web UI.
    route('GET', '/embeddings', 'comfyEmbeddings', (_req, res) => sendJson(res, 200, [])),
    route('GET', '/extensions', 'comfyExtensions', (_req, res) => sendJson(res, 200, [])),
    route('GET', '/models', 'comfyModels', (_req, res) => sendJson(res, 200, [])),
  ];
}

export { Answered };
