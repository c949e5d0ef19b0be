/**
 * The emulator's control endpoint, for driving fault injection from outside the process (the CLI's emulator,
 * a test in another process). Served only with the `control: true` option, at the origin root: outside the
 * mount prefix, outside authentication, not recorded in `requests`. Not part of the contract.
 *
 * - `GET /__emulator/faults` → 200 {@link FaultState}: the plan in force, its counters, the log of firings.
 * - `POST /__emulator/faults` with a JSON {@link FaultPlan} (`{"seed"?: n, "rules": [rule or CLI spec, …]}`)
 *   → replaces the plan (counters restart) and answers 200 the new state; 400 `invalid_fault_plan` (envelope)
 *   when the plan is invalid, the plan in force then unchanged. `{"rules": []}` clears it.
 * Anything else under `/__emulator/` → 404 `not_found`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { EmulatorError } from './errors';
import type { FaultInjector } from './faults';
import { readJson, sendJson } from './http';
import type { ControlHandler } from './server';

/** The control endpoint over `faults`. */
export function controlHandler(faults: FaultInjector): ControlHandler {
  return async (req: IncomingMessage, res: ServerResponse, path: string) => {
    if (path !== '/__emulator/faults') throw new EmulatorError('not_found', `no control operation at ${path} (there is /__emulator/faults)`);
    if (req.method === 'GET') {
      sendJson(res, 200, faults.state());
      return;
    }
    if (req.method !== 'POST') throw new EmulatorError('not_found', `${req.method} ${path}: use GET or POST`);
    let body: unknown;
    try {
      body = await readJson(req);
    } catch (e) {
      sendJson(res, 400, { error: { code: 'invalid_fault_plan', message: (e as Error).message } });
      return;
    }
    try {
      faults.setPlan(body);
    } catch (e) {
      if (!(e instanceof TypeError)) throw e;
      sendJson(res, 400, { error: { code: 'invalid_fault_plan', message: e.message } });
      return;
    }
    sendJson(res, 200, faults.state());
  };
}
