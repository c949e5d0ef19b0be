/**
 * The emulator's control endpoint, for driving fault injection and node holds from outside the process (the CLI's
 * emulator, a test in another process). Served only with the `control: true` option, at the origin root: outside
 * the mount prefix, outside authentication, not recorded in `requests`. Not part of the contract.
 *
 * Faults (faults.ts):
 * - `GET /__emulator/faults` → 200 {@link FaultState}: the plan in force, its counters, the log of firings.
 * - `POST /__emulator/faults` with a JSON {@link FaultPlan} (`{"seed"?: n, "rules": [rule or CLI spec, …]}`)
 *   → replaces the plan (counters restart) and answers 200 the new state; 400 `invalid_fault_plan` (envelope)
 *   when the plan is invalid, the plan in force then unchanged. `{"rules": []}` clears it.
 *
 * Node holds (holds.ts: a node the plan names stands still at its start until released):
 * - `GET /__emulator/holds` → 200 {@link HoldState}: `{"plan": {…} | null, "held": [{jobId, nodeId, classType,
 *   index, total, since}, …]}`, the nodes held now, oldest first.
 * - `POST /__emulator/holds` with a JSON {@link HoldPlan} (`{}`: every node; `{"classTypes": ["SaveImage"]}`,
 *   `{"nodeIds": ["2"]}`) → replaces the plan and answers 200 the new state; 400 `invalid_hold_plan` (envelope) when
 *   it is invalid, the plan in force then unchanged. Nodes already held stay held.
 * - `DELETE /__emulator/holds` → clears the plan and lets every held node go on; 200 the new state.
 * - `POST /__emulator/holds/release` with `{"jobId": "…"}` (that job's held node) or an empty body or `{}` (every
 *   held node) → 200 `{"released": [held node, …]}` (empty when nothing was held); 400 `invalid_hold_plan` for
 *   another body. A node released executes; the next node the plan names holds in turn.
 * Anything else under `/__emulator/` → 404 `not_found`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { EmulatorError } from './errors';
import type { FaultInjector } from './faults';
import type { NodeHolds } from './holds';
import type { Owners } from './owners';
import { readJson, sendJson } from './http';
import type { ControlHandler } from './server';
import { isPlainObject } from '../core/util/workflow';

/** Answers 400 with the envelope of `code` (a control refusal: not one of the contract's codes). */
function refuse(res: ServerResponse, code: 'invalid_fault_plan' | 'invalid_hold_plan', message: string): void {
  sendJson(res, 400, { error: { code, message } });
}

async function faultsOperation(
  faults: FaultInjector,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<void> {
  if (req.method === 'GET') {
    sendJson(res, 200, faults.state());
    return;
  }
  if (req.method !== 'POST') throw new EmulatorError('not_found', `${req.method} ${path}: use GET or POST`);
  let body: unknown;
  try {
    body = await readJson(req);
  } catch (e) {
    refuse(res, 'invalid_fault_plan', (e as Error).message);
    return;
  }
  try {
    faults.setPlan(body);
  } catch (e) {
    if (!(e instanceof TypeError)) throw e;
    refuse(res, 'invalid_fault_plan', e.message);
    return;
  }
  sendJson(res, 200, faults.state());
}

async function holdsOperation(
  holds: NodeHolds,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<void> {
  if (path === '/__emulator/holds/release') {
    if (req.method !== 'POST') throw new EmulatorError('not_found', `${req.method} ${path}: use POST`);
    let body: unknown;
    try {
      body = await readJson(req, 'invalid_workflow', { optional: true });
    } catch (e) {
      refuse(res, 'invalid_hold_plan', (e as Error).message);
      return;
    }
    const jobId = isPlainObject(body) ? body.jobId : undefined;
    const valid =
      body === undefined ||
      (isPlainObject(body) &&
        Object.keys(body).every((k) => k === 'jobId') &&
        (jobId === undefined || (typeof jobId === 'string' && jobId !== '')));
    if (!valid) {
      refuse(
        res,
        'invalid_hold_plan',
        `release takes an empty body, {} (every held node) or {"jobId": "<job id>"}; got ${JSON.stringify(body)}`,
      );
      return;
    }
    sendJson(res, 200, { released: holds.release(jobId as string | undefined) });
    return;
  }
  if (req.method === 'GET') {
    sendJson(res, 200, holds.state());
    return;
  }
  if (req.method === 'DELETE') {
    holds.setPlan(null);
    sendJson(res, 200, holds.state());
    return;
  }
  if (req.method !== 'POST') throw new EmulatorError('not_found', `${req.method} ${path}: use GET, POST or DELETE`);
  let body: unknown;
  try {
    body = await readJson(req);
    // JSON null is no plan: clearing is DELETE's.
    holds.setPlan(body === null ? undefined : body);
  } catch (e) {
    if (!(e instanceof TypeError) && !(e instanceof EmulatorError)) throw e;
    refuse(res, 'invalid_hold_plan', e.message);
    return;
  }
  sendJson(res, 200, holds.state());
}

/** The control endpoint over `faults` and `holds`. */
export function controlHandler(faults: FaultInjector, holds: NodeHolds): ControlHandler {
  return async (req: IncomingMessage, res: ServerResponse, path: string) => {
    if (path === '/__emulator/faults') return faultsOperation(faults, req, res, path);
    if (path === '/__emulator/holds' || path === '/__emulator/holds/release')
      return holdsOperation(holds, req, res, path);
    throw new EmulatorError(
      'not_found',
      `no control operation at ${path} (there are /__emulator/faults, /__emulator/holds and /__emulator/holds/release)`,
    );
  };
}

/**
 * The handler of `/__emulator/…`: the owners' operations (owners.ts) when owned, the rest the control endpoint's
 * (control.ts) when served; none when neither is.
 */
export function controlOf(control: ControlHandler | undefined, owners: Owners | undefined): ControlHandler | undefined {
  if (owners === undefined) return control;
  return (req, res, path) => {
    if (owners.owns(path)) return owners.handle(req, res, path);
    if (control !== undefined) return control(req, res, path);
    return Promise.reject(new EmulatorError('not_found', `no operation at ${path}`));
  };
}
