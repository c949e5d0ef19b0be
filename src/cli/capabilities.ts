/**
 * Refusing what the connection's API cannot do, by its backend's capabilities (core/jobs/backend.ts
 * `JobCapabilities`), never by the API's name: the words are the core's (core/jobs/refusals.ts `refusalText`, which
 * the editor says too), with the CLI's fix, dropping `--api` (unsetting COMFY_API).
 */
import { refusalOf, type RefusedCapability } from '../core';
import type { V2Client } from '../core/backends';
import type { BackendOptions, CliContext, CliJobs } from './context';
import { UsageError } from './output';

/**
 * The run's jobs (CliContext `jobs`, built with `options` when first asked) when their API offers `capability`.
 * @throws UsageError (exit 2, nothing sent) with the core's sentence and the fix when it does not; as CliContext `jobs`.
 */
export async function capable(
  ctx: CliContext,
  capability: RefusedCapability,
  options?: BackendOptions,
): Promise<CliJobs> {
  const jobs = await ctx.jobs(options);
  const { backend } = jobs.lease;
  const refusal = refusalOf(backend.capabilities, capability, backend.api);
  if (refusal) throw new UsageError(`${refusal} (drop --api ${backend.api})`);
  return jobs;
}

/**
 * Runs `fn` with the asset client of the run's connection (its backend's own: closed with the run), where its API has
 * assets (`capabilities.assets`).
 * @throws UsageError (exit 2, nothing sent) in the core's words where it has none; as CliContext `jobs` and `fn`.
 */
export async function withAssets<T>(ctx: CliContext, fn: (assets: V2Client) => Promise<T>): Promise<T> {
  const { lease } = await capable(ctx, 'assets');
  // capabilities.assets: the connection holds its asset client (core/backends createBackend).
  return fn(lease.connection.assets!);
}
