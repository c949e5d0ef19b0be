/**
 * The v1 operations (Cloud API v1 (deprecated), Endpoints; the public OpenAPI of the v1 cloud API where the
 * document says "not shown"), all under the emulator's mount prefix, authenticated by `X-API-Key` (auth.ts),
 * refusals answered `{code, message}` (the public ErrorResponse):
 *
 * - GET /api/object_info: the node definitions (objectInfo.ts); GET /api/object_info/{class} only with the
 *   `perClassObjectInfo` option (the document does not show it): `{<class>: definition}`, `{}` for an unknown class;
 * - POST /api/upload/image, POST /api/upload/mask (upload.ts);
 * - POST /api/prompt (prompt.ts): 200 `{prompt_id, number, node_errors: {}}`; 400 `{error, node_errors}`;
 * - GET /api/job/{id}/status: `{id, status, created_at, updated_at, last_state_update, assigned_inference,
 *   error_message}`, `status` in the emulator's vocabulary (state.ts) unless forced for that job;
 * - GET /api/jobs/{id} (the public JobDetailResponse; unless `jobsEndpoint: false`) and GET /api/history_v2/{id}
 *   (the engine's history `{<id>: {prompt, outputs, status, meta}}`; `{}` while the job runs): the outputs per
 *   node `{images: [{filename, subfolder, type}]}`;
 * - GET /api/view?filename=&subfolder=&type=: 302 to a signed URL on the signed origin, which refuses any request
 *   carrying a credential (auth.ts REJECT_CREDENTIALS); 400 without `filename`, 404 for a name of no file of yours;
 * - POST /api/interrupt (optional JSON `{prompt_id}`: that job, else every running v1 job of yours) and POST
 *   /api/queue `{delete: [ids], clear}` (queued jobs): the public document's cancel operations; they answer 200.
 * A job of another key answers 404 like an unknown one.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { EmulatorError } from '../errors';
import type { Faults } from '../faults';
import { readJson, sendJson } from '../http';
import type { Handler, RequestContext, Route } from '../router';
import type { UrlSigner } from '../signing';
import type { AssetStore } from '../v2/assets';
import type { JobRecord, JobStore } from '../v2/jobs';
import type { JobRunner } from '../v2/runner';
import { iso } from '../v2/wire';
import type { Auth } from '../auth';
import { isPlainObject } from '../../core/util/workflow';
import { NODE_DEFINITIONS } from '../engine/nodes';
import { nodeInfo, objectInfo } from './objectInfo';
import { checkPrompt, PromptRefused } from './prompt';
import { jobsEndpointStatus, v1Status, type FileRef, type V1Job, type V1State } from './state';
import { receiveV1Upload, V1Refusal } from './upload';

/** What the v1 routes need. */
interface V1RouteDeps {
  readonly state: V1State;
  readonly jobs: JobStore;
  readonly assets: AssetStore;
  readonly runner: JobRunner;
  readonly faults: Faults;
  readonly signer: UrlSigner;
  readonly auth: Auth;
  /** Serve GET /api/jobs/{id} (default true; false: it answers 404 for every id, so a client falls back to history). */
  readonly jobsEndpoint: boolean;
  /** Serve GET /api/object_info/{class} (default false, then 404: the document shows only the whole map). */
  readonly perClassObjectInfo: boolean;
}

/** Answers a v1 refusal: 400 `{error, node_errors}` for a prompt, `{code, message}` otherwise. */
function guarded(handler: Handler): Handler {
  return async (req, res, context) => {
    try {
      await handler(req, res, context);
    } catch (e) {
      if (e instanceof PromptRefused) sendJson(res, 400, e.body);
      else if (e instanceof V1Refusal) sendJson(res, e.status, { code: e.code, message: e.message });
      else throw e;
    }
  };
}

function seconds(ms: number): number {
  return Math.floor(ms / 1000);
}

/** The outputs object of the engine: node id → `{images: [file refs]}`. */
function outputsOf(job: V1Job): Record<string, { images: FileRef[] }> {
  return Object.fromEntries([...job.outputs.entries()].map(([node, images]) => [node, { images }]));
}

/**
 * 404 for an operation switched off: answered after the v1 authentication (a route left out of the table would be
 * refused by the v2 bearer check first, and a v1 client would read 401).
 */
function notServed(context: RequestContext): EmulatorError {
  return new EmulatorError('not_found', `no operation at ${context.method} ${context.path.split('?')[0]}`);
}

/** The v1 routes. */
export function v1Routes(deps: V1RouteDeps): Route[] {
  const { state, jobs, assets, runner, faults, signer } = deps;

  const v1JobOf = (context: RequestContext, id: string): { job: V1Job; record: JobRecord | undefined } => {
    const job = state.job(context.owner, id);
    if (job === undefined) throw new EmulatorError('not_found', `no job with prompt_id ${JSON.stringify(id)}`);
    // The record leaves the store after retention (then the job is `lost`), or is still there.
    return { job, record: jobs.get(context.owner, id) };
  };

  const submitPrompt = async (req: IncomingMessage, res: ServerResponse, context: RequestContext): Promise<void> => {
    let body: unknown;
    try {
      body = await readJson(req);
    } catch {
      throw new PromptRefused({
        error: {
          type: 'invalid_prompt',
          message: 'The request body must be JSON: {"prompt": {…}, "extra_data"?: {…}}',
          details: '',
          extra_info: {},
        },
        node_errors: {},
      });
    }
    const checked = checkPrompt(body, context.owner, state);
    const extraData = checked.partnerKey === null ? null : { api_key_svc_org: checked.partnerKey };
    const record = jobs.create(context.owner, checked.prompt, checked.plan, extraData);
    const job: V1Job = {
      record,
      owner: context.owner,
      number: state.nextNumber(),
      prompt: checked.prompt,
      lastStatus: record.status,
      started: new Set(),
      pending: new Map(),
      outputs: new Map(),
      messages: [],
      executed: [],
      forcedStatus: undefined,
    };
    // Registered before it is queued: the scheduler may start it at once, and its first events must find it.
    state.jobs.set(record.id, job);
    state.prompts.push({
      promptId: record.id,
      owner: context.owner,
      partnerKey: checked.partnerKey,
      extraDataKeys: checked.extraDataKeys,
      clientId: checked.clientId,
    });
    runner.submit(record);
    const fault = faults.afterCreate(context);
    if (fault !== undefined && fault.delayMs > 0) {
      try {
        await faults.sleep(fault.delayMs);
      } catch {
        res.destroy();
        return;
      }
    }
    if (fault?.then.kind === 'reset') res.destroy();
    else if (fault?.then.kind === 'status')
      sendJson(res, fault.then.answer.status, { code: fault.then.answer.code, message: fault.then.answer.message });
    else sendJson(res, 200, { prompt_id: record.id, number: job.number, node_errors: {} });
  };

  const jobStatus = (_req: IncomingMessage, res: ServerResponse, context: RequestContext): void => {
    const { job, record } = v1JobOf(context, context.params.id);
    const status =
      job.forcedStatus ??
      (record === undefined
        ? job.lastStatus === 'expired'
          ? 'lost'
          : undefined
        : v1Status(record.status, state.vocabulary));
    if (status === undefined)
      throw new EmulatorError('not_found', `no job with prompt_id ${JSON.stringify(context.params.id)}`);
    const created = job.record.createdAt;
    const updated = job.record.completedAt ?? job.record.startedAt ?? created;
    sendJson(res, 200, {
      id: job.record.id,
      status,
      created_at: iso(created),
      updated_at: iso(updated),
      last_state_update: iso(updated),
      assigned_inference: null,
      error_message: job.record.error?.message ?? null,
    });
  };

  const jobDetail = (_req: IncomingMessage, res: ServerResponse, context: RequestContext): void => {
    const { job } = v1JobOf(context, context.params.id);
    const r = job.record;
    const terminal = ['succeeded', 'failed', 'canceled', 'expired'].includes(job.lastStatus);
    const detail: Record<string, unknown> = {
      id: r.id,
      status: jobsEndpointStatus(job.lastStatus),
      create_time: seconds(r.createdAt),
      update_time: seconds(r.completedAt ?? r.startedAt ?? r.createdAt),
    };
    if (terminal) {
      const outputs = outputsOf(job);
      const first = [...job.outputs.entries()].find(([, refs]) => refs.length > 0);
      detail.outputs = outputs;
      detail.outputs_count = [...job.outputs.values()].reduce((n, refs) => n + refs.length, 0);
      if (first !== undefined) detail.preview_output = { ...first[1][0], nodeId: first[0], mediaType: 'images' };
      detail.execution_status = {
        status_str: job.lastStatus === 'succeeded' ? 'success' : 'error',
        completed: job.lastStatus === 'succeeded',
        messages: job.messages,
      };
      detail.execution_meta = Object.fromEntries(
        job.executed.map((id) => [id, { node_id: id, display_node: id, parent_node: null, real_node_id: id }]),
      );
      if (r.error !== null) {
        detail.execution_error = {
          node_id: r.error.node_id ?? '',
          node_type: r.error.class_type ?? '',
          exception_message: r.error.message,
          exception_type: 'RuntimeError',
          traceback: [],
          current_inputs: {},
          current_outputs: {},
        };
      }
    }
    sendJson(res, 200, detail);
  };

  const history = (_req: IncomingMessage, res: ServerResponse, context: RequestContext): void => {
    const { job } = v1JobOf(context, context.params.id);
    const terminal = ['succeeded', 'failed', 'canceled', 'expired'].includes(job.lastStatus);
    // The engine's history has no entry for a job until it ends.
    if (!terminal) return sendJson(res, 200, {});
    const outputNodes = job.record.plan.steps.filter((s) => s.definition.isOutput).map((s) => s.nodeId);
    sendJson(res, 200, {
      [job.record.id]: {
        // Never the extra_data: it may hold the partner key.
        prompt: {
          priority: job.number,
          prompt_id: job.record.id,
          prompt: job.prompt,
          extra_data: {},
          outputs_to_execute: outputNodes,
        },
        outputs: outputsOf(job),
        status: {
          status_str: job.lastStatus === 'succeeded' ? 'success' : 'error',
          completed: job.lastStatus === 'succeeded',
          messages: job.messages,
        },
        meta: Object.fromEntries(
          [...job.outputs.keys()].map((id) => [
            id,
            { node_id: id, display_node: id, parent_node: null, real_node_id: id },
          ]),
        ),
      },
    });
  };

  const view = (_req: IncomingMessage, res: ServerResponse, context: RequestContext): void => {
    const filename = context.query.get('filename');
    if (filename === null || filename === '')
      throw new V1Refusal(400, 'invalid_request', 'give the file as ?filename=<name>&subfolder=&type=output');
    // `subfolder` and `type` are accepted and ignored: names are content-addressed (state.ts).
    const file = state.file(context.owner, filename);
    const asset = file === undefined ? undefined : assets.get(context.owner, file.assetId);
    if (asset === undefined) throw new EmulatorError('not_found', `no file named ${JSON.stringify(filename)}`);
    const signed = signer.sign(asset.id, asset.expiresAt);
    res.writeHead(302, { location: signed.url, 'cache-control': 'no-store', 'content-length': '0' });
    res.end();
  };

  const interrupt = async (req: IncomingMessage, res: ServerResponse, context: RequestContext): Promise<void> => {
    const body = await readJson(req).catch(() => ({}));
    const only = isPlainObject(body) && typeof body.prompt_id === 'string' ? body.prompt_id : undefined;
    for (const job of state.jobs.values()) {
      if (job.owner !== context.owner || (only !== undefined && job.record.id !== only)) continue;
      const record = jobs.get(context.owner, job.record.id);
      if (record?.status === 'running') runner.cancel(record);
    }
    sendJson(res, 200, {});
  };

  const queue = async (req: IncomingMessage, res: ServerResponse, context: RequestContext): Promise<void> => {
    const body = await readJson(req).catch(() => undefined);
    if (!isPlainObject(body))
      throw new V1Refusal(400, 'invalid_request', 'send {"delete": [prompt ids]} or {"clear": true}');
    const ids = Array.isArray(body.delete) ? body.delete.filter((id): id is string => typeof id === 'string') : [];
    const deleted: string[] = [];
    for (const job of state.jobs.values()) {
      if (job.owner !== context.owner || (body.clear !== true && !ids.includes(job.record.id))) continue;
      const record = jobs.get(context.owner, job.record.id);
      if (record?.status !== 'queued') continue;
      runner.cancel(record);
      deleted.push(record.id);
    }
    sendJson(res, 200, { deleted, cleared: body.clear === true });
  };

  const route = (method: string, pattern: string, name: string, handler: Handler): Route => ({
    method,
    pattern,
    name,
    handler: guarded(handler),
    auth: deps.auth,
    errorBody: 'flat',
  });
  return [
    route('GET', '/api/object_info', 'v1ObjectInfo', (_req, res, context) =>
      sendJson(res, 200, objectInfo(state.inputNames(context.owner))),
    ),
    route('GET', '/api/object_info/{class}', 'v1ObjectInfoClass', (_req, res, context) => {
      if (!deps.perClassObjectInfo) throw notServed(context);
      const definition = NODE_DEFINITIONS.get(context.params.class);
      // The engine answers an unknown class with an empty map.
      sendJson(
        res,
        200,
        definition === undefined
          ? {}
          : { [definition.classType]: nodeInfo(definition, state.inputNames(context.owner)) },
      );
    }),
    route('POST', '/api/upload/image', 'v1UploadImage', async (req, res, context) =>
      sendJson(res, 200, await receiveV1Upload(req, context.owner, false, assets, state)),
    ),
    route('POST', '/api/upload/mask', 'v1UploadMask', async (req, res, context) =>
      sendJson(res, 200, await receiveV1Upload(req, context.owner, true, assets, state)),
    ),
    route('POST', '/api/prompt', 'v1Prompt', submitPrompt),
    route('GET', '/api/job/{id}/status', 'v1JobStatus', jobStatus),
    route('GET', '/api/jobs/{id}', 'v1Job', (req, res, context) => {
      if (!deps.jobsEndpoint) throw notServed(context);
      jobDetail(req, res, context);
    }),
    route('GET', '/api/history_v2/{id}', 'v1History', history),
    route('GET', '/api/view', 'v1View', view),
    route('POST', '/api/interrupt', 'v1Interrupt', interrupt),
    route('POST', '/api/queue', 'v1Queue', queue),
  ];
}
