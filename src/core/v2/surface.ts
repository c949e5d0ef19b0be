/**
 * Base URLs and surfaces. Rules: Job and Asset API v2, What the service does (the three surfaces, one
 * contract, moved between by the base address; a serverless deployment's id is a DNS-safe subdomain label) and Job
 * `urls` (host-relative links carry any mount prefix of the serving surface). The public addresses are the v2 OpenAPI
 * document's `servers`: the managed cloud at `https://cloud.comfy.org`, a serverless deployment on a host of its own,
 * `https://{deployment}.run.comfy.app` (staging `{deployment}.stg.run.comfy.app`), the self-hosted companion at
 * `http://127.0.0.1:8189`. A deployment's base URL is therefore never the cloud's URL plus a path.
 */
import { InputError } from '../http/errors';
import { normalizeBaseUrl } from '../http/baseUrl';
import { isProcessAlive } from '../state/stateStore';

/** Which kind of server a base URL points at. */
type SurfaceKind = 'cloud' | 'deployment' | 'self-hosted';

/** A base URL and the surface it implies. */
export interface Surface {
  kind: SurfaceKind;
  /** Normalised base URL: scheme, authority and optional path prefix, no trailing slash. */
  baseUrl: string;
  /** Scheme plus authority of `baseUrl`: the one origin that credentials are sent to. */
  origin: string;
}

/** The managed cloud's public base URL (Job and Asset API v2 OpenAPI document, `servers`: Comfy Cloud). */
export const CLOUD_BASE_URL = 'https://cloud.comfy.org';

/** The self-hosted companion's default base URL (Job and Asset API v2, What the service does: loopback port 8189). */
export const COMPANION_BASE_URL = 'http://127.0.0.1:8189';

/**
 * The domain serverless deployments are hosts under: `https://{deployment}.run.comfy.app` (Job and Asset API v2 OpenAPI
 * document, `servers`: Serverless deployment).
 */
export const DEFAULT_DEPLOYMENT_DOMAIN = 'run.comfy.app';

/** The staging domain of serverless deployments (the same `servers` entry: staging uses `{deployment}.stg.run.comfy.app`). */
export const STAGING_DEPLOYMENT_DOMAIN = 'stg.run.comfy.app';

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/** True for localhost, 127.0.0.0/8 and [::1]. */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK.test(hostname);
}

/**
 * True for `localhost` and every name under `.localhost`: names that always mean this machine's loopback address
 * (RFC 6761, Special-Use Domain Names, section 6.3), never looked up in the DNS.
 */
function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/** The public deployment domains: a base URL on a host under one of them is a serverless deployment. */
const PUBLIC_DEPLOYMENT_HOST = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.(?:stg\.)?run\.comfy\.app$/i;

/**
 * The surface a base URL implies: a host under the public deployment domain (`<id>.run.comfy.app`, staging
 * `<id>.stg.run.comfy.app`) or a `/deployment/<id>` mount prefix (a gateway may mount a deployment's API there) is a
 * serverless deployment, a loopback host is the self-hosted companion, anything else the managed cloud. A deployment
 * under a domain of the user's choosing is known as one by its connection, not by its URL.
 * @throws InputError for a bad URL (see {@link normalizeBaseUrl}).
 */
export function surfaceFromBaseUrl(input: string): Surface {
  const baseUrl = normalizeBaseUrl(input);
  const url = new URL(baseUrl);
  const kind: SurfaceKind =
    PUBLIC_DEPLOYMENT_HOST.test(url.hostname) || /\/deployment\/[^/]+$/.test(url.pathname)
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

/** One DNS label of a deployment domain (the same rule as a deployment id). */
const DOMAIN_LABEL = DEPLOYMENT_ID;

/**
 * Validates and normalises a deployment domain (`comfyCloud.deploymentDomain`, the CLI's `--deployment-domain`): a
 * host name of lowercase DNS labels (trimmed, lowercased, a final dot dropped), optionally with `:port`; no scheme,
 * path, user, query or IP address. E.g. `run.comfy.app` (the default), `stg.run.comfy.app` (staging), `localhost:8190`
 * (a local emulator serving deployments on hosts of their own).
 * @throws InputError `bad_deployment_domain` naming the problem and the fix.
 */
export function normalizeDeploymentDomain(input: string): string {
  const raw = input.trim().toLowerCase().replace(/\.$/, '');
  const fail = (why: string): InputError =>
    new InputError(
      'bad_deployment_domain',
      `"${input}" is not a deployment domain: ${why}. Give a host name such as ${DEFAULT_DEPLOYMENT_DOMAIN} (staging: ${STAGING_DEPLOYMENT_DOMAIN}), without scheme or path.`,
    );
  if (raw === '') throw fail('it is empty');
  if (raw.includes('://')) throw fail('it has a scheme');
  if (/[/?#@\s]/.test(raw)) throw fail('it has a path, a query, a user or a space');
  const m = /^([^:]+)(?::(\d{1,5}))?$/.exec(raw);
  if (!m) throw fail('it is not a host name with an optional :port');
  const [, host, port] = m;
  const labels = host!.split('.');
  if (!labels.every((l) => DOMAIN_LABEL.test(l)))
    throw fail('each part of a host name is letters, digits and dashes, not starting or ending with a dash');
  if (/^\d+$/.test(labels[labels.length - 1]!)) throw fail('it is an IP address, not a domain');
  // The longest host name is 253 characters; the deployment id and its dot come in front.
  if (host!.length > 253 - 2) throw fail('it is too long');
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) throw fail('its port is not 1–65535');
  return port === undefined ? host! : `${host}:${Number(port)}`;
}

/**
 * The base URL of a serverless deployment: its own host, the id as the subdomain label of `domain`:
 * `https://{id}.run.comfy.app` by default (Job and Asset API v2, What the service does: "the deployment id is a
 * DNS-safe subdomain label"; its OpenAPI document's `servers`). Under a `localhost` domain (a local emulator, which
 * speaks plain HTTP on loopback: RFC 6761 names, never sent off the machine) the scheme is `http`.
 * The one function the extension's connections and the CLI's `--deployment` both build the URL with.
 * @param domain a deployment domain ({@link normalizeDeploymentDomain}); default {@link DEFAULT_DEPLOYMENT_DOMAIN}
 * @throws InputError `bad_deployment_id` for an id that is not a DNS label; `bad_deployment_domain` for a bad domain.
 */
export function deploymentBaseUrl(deploymentId: string, domain: string = DEFAULT_DEPLOYMENT_DOMAIN): string {
  if (!DEPLOYMENT_ID.test(deploymentId)) {
    throw new InputError(
      'bad_deployment_id',
      `"${deploymentId}" is not a deployment id: use the lowercase DNS label shown for the deployment (letters, digits and dashes, up to 63).`,
    );
  }
  const host = normalizeDeploymentDomain(domain);
  const scheme = isLocalhostName(host.replace(/:\d+$/, '')) ? 'http' : 'https';
  return `${scheme}://${deploymentId}.${host}`;
}

/**
 * A deployment's address in the form an earlier version of this client made, and the one used now. Before, a
 * deployment by id was the cloud's base URL plus `/deployment/{id}`; the public contract has no such address on the
 * cloud's host (a deployment has a host of its own), so the deployment's own host is used and the user is told once.
 */
export interface LegacyAddress {
  /** The URL the earlier version sent requests to, e.g. `https://cloud.comfy.org/deployment/dep-1`. */
  before: string;
  /** The URL used now, e.g. `https://dep-1.run.comfy.app`. */
  now: string;
  /** The deployment id. */
  deploymentId: string;
}

/**
 * A base URL written in the old form: the public cloud's address plus `/deployment/{id}`, which the public service
 * does not serve (the v2 OpenAPI document's `servers`: a deployment is `https://{deployment}.run.comfy.app`). Such a
 * URL is moved to the deployment's own host ({@link deploymentBaseUrl} under `domain`). Any other URL with a
 * `/deployment/{id}` prefix (a gateway or an emulator that mounts a deployment's API there) is used as it is.
 * Undefined when `baseUrl` is not in the old form. @throws InputError for a bad URL or domain.
 */
export function legacyDeploymentAddress(
  baseUrl: string,
  domain: string = DEFAULT_DEPLOYMENT_DOMAIN,
): LegacyAddress | undefined {
  const before = normalizeBaseUrl(baseUrl);
  const url = new URL(before);
  const m = /^\/deployment\/([^/]+)$/.exec(url.pathname);
  if (!m || url.origin !== CLOUD_BASE_URL || !DEPLOYMENT_ID.test(m[1]!)) return undefined;
  return { before, now: deploymentBaseUrl(m[1]!, domain), deploymentId: m[1]! };
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
  isAlive: (pid: number) => boolean = isProcessAlive,
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
    return {
      pid: state.pid,
      host: state.host ?? new URL(baseUrl).hostname,
      port: state.port ?? Number(new URL(baseUrl).port),
      url: baseUrl,
    };
  } catch {
    return undefined;
  }
}
