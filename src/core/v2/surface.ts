/**
 * Base URLs and surfaces. Rules: Job and Asset API v2, What the service does (the three surfaces, one
 * contract, moved between by the base address) and Job `urls` (a serverless deployment's gateway may mount the API
 * under `/deployment/{deployment_id}`; public sources).
 */
import { InputError } from '../http/errors';
import { normalizeBaseUrl } from '../http/baseUrl';

/** Which kind of server a base URL points at. */
export type SurfaceKind = 'cloud' | 'deployment' | 'self-hosted';

/** A base URL and the surface it implies. */
export interface Surface {
  kind: SurfaceKind;
  /** Normalised base URL: scheme, authority and optional path prefix, no trailing slash. */
  baseUrl: string;
  /** Scheme plus authority of `baseUrl`: the one origin that credentials are sent to. */
  origin: string;
}

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/** True for localhost, 127.0.0.0/8 and [::1]. */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK.test(hostname);
}

/**
 * The surface a base URL implies: a `/deployment/<id>` prefix is a serverless deployment, a loopback host is
 * the self-hosted companion, anything else the managed cloud.
 * @throws InputError for a bad URL (see {@link normalizeBaseUrl}).
 */
export function surfaceFromBaseUrl(input: string): Surface {
  const baseUrl = normalizeBaseUrl(input);
  const url = new URL(baseUrl);
  const kind: SurfaceKind = /\/deployment\/[^/]+$/.test(url.pathname)
    ? 'deployment'
    : isLoopbackHost(url.hostname)
      ? 'self-hosted'
      : 'cloud';
  return { kind, baseUrl, origin: url.origin };
}

/**
 * A deployment id is a DNS-safe subdomain label (Job and Asset API v2, What the service does): 1–63 of [a-z0-9-], no
 * dash at the ends.
 */
export const DEPLOYMENT_ID = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * The base URL of a serverless deployment: the cloud's base URL with the mount prefix `/deployment/{id}`
 * (public sources: a serverless deployment's gateway may mount the API under `/deployment/{deployment_id}`).
 * @throws InputError `bad_deployment_id` for an id that is not a DNS label; `bad_base_url`.
 */
export function deploymentBaseUrl(cloudBaseUrl: string, deploymentId: string): string {
  if (!DEPLOYMENT_ID.test(deploymentId)) {
    throw new InputError('bad_deployment_id', `"${deploymentId}" is not a deployment id: use the lowercase DNS label shown for the deployment (letters, digits and dashes, up to 63).`);
  }
  return `${normalizeBaseUrl(cloudBaseUrl).replace(/\/deployment\/[^/]+$/, '')}/deployment/${deploymentId}`;
}

/** What the self-hosted companion writes when it runs in the background (its own state file; not in the documents). */
export interface CompanionState {
  pid: number;
  host: string;
  port: number;
  url: string;
}

/**
 * Finds a running self-hosted companion from its state file, `$XDG_STATE_HOME/comfy-api-proxy/proxy.json`
 * (default `~/.local/state/comfy-api-proxy/proxy.json`, where the companion writes it). Undefined when there is no
 * file, it does not parse, its URL is not http(s), or its process is gone.
 * @param isAlive whether a pid runs (injected for tests; default: signal 0)
 */
export async function discoverCompanion(
  env: NodeJS.ProcessEnv = process.env,
  isAlive: (pid: number) => boolean = defaultIsAlive,
): Promise<CompanionState | undefined> {
  const { readFile } = await import('node:fs/promises');
  const { join } = await import('node:path');
  const { homedir } = await import('node:os');
  const file = join(env.XDG_STATE_HOME || join(homedir(), '.local', 'state'), 'comfy-api-proxy', 'proxy.json');
  try {
    const state = JSON.parse(await readFile(file, 'utf8')) as Partial<CompanionState>;
    const url = state.url ?? (state.host && state.port ? `http://${state.host}:${state.port}` : undefined);
    if (!url || typeof state.pid !== 'number' || !isAlive(state.pid)) return undefined;
    const baseUrl = normalizeBaseUrl(url);
    return { pid: state.pid, host: state.host ?? new URL(baseUrl).hostname, port: state.port ?? Number(new URL(baseUrl).port), url: baseUrl };
  } catch {
    return undefined;
  }
}

function defaultIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
