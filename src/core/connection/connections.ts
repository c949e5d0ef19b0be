/**
 * Connections: a name, a surface (managed cloud, serverless deployment, self-hosted
 * companion, local emulator) and its base URL. Several can exist, one is active; switching changes only the base
 * address and the credential (Job and Asset API v2, What the service does: one contract on every surface, moved between
 * by the base address). The list comes from the user's settings: untrusted input, checked here entry by entry.
 */
import { InputError } from '../http/errors';
import { normalizeBaseUrl } from '../http/baseUrl';
import {
  DEFAULT_DEPLOYMENT_DOMAIN,
  deploymentBaseUrl,
  legacyDeploymentAddress,
  surfaceFromBaseUrl,
  type LegacyAddress,
  type Surface,
} from '../v2/surface';

/** The kinds of connection a user can add. */
export const CONNECTION_KINDS = ['cloud', 'deployment', 'companion', 'emulator'] as const;
export type ConnectionKind = (typeof CONNECTION_KINDS)[number];

/** One configured connection, as stored in `comfyCloud.connections`. */
export interface ConnectionEntry {
  /** Unique, non-empty, at most {@link MAX_CONNECTION_NAME} characters. */
  name: string;
  surface: ConnectionKind;
  /**
   * The server's base URL. Not for a deployment, which is reached at its own host from its id ({@link deploymentId});
   * on a deployment it is the old form (the cloud's base URL an earlier version added `/deployment/{id}` to), not used.
   */
  baseUrl?: string;
  /** A serverless deployment's id (a DNS label): only for `surface: 'deployment'`. */
  deploymentId?: string;
  /**
   * Which API the server is spoken to in: `v2` (the default, Job and Asset API v2), the deprecated `v1`
   * (Cloud API v1 (deprecated): the managed cloud's v1, or a local engine's own API), or `comfyui` (a ComfyUI server's
   * native API: ComfyUI server API (observed)). Not for a deployment (v2 only).
   */
  api?: ConnectionApi;
}

/** The APIs a connection can speak: v2 (the default), the deprecated v1, or a ComfyUI server's native API. */
export const CONNECTION_APIS = ['v2', 'v1', 'comfyui'] as const;
/** The API a connection speaks (`comfyCloud.connections[].api`, the CLI's `--api`). */
export type ConnectionApi = (typeof CONNECTION_APIS)[number];

/**
 * Whether an API is deprecated (Cloud API v1 (deprecated), Versioning): a connection speaking it says so, and how to
 * move. A table, so that what reads it never names an API in a branch.
 */
const DEPRECATED_APIS: Record<ConnectionApi, boolean> = { v2: false, v1: true, comfyui: false };

/**
 * The cheap route a connection's health is probed on, by API (health.ts `probeHealth`): the companion's and the
 * emulator's `/api/v2/health` for v2 and v1 (a server without it answers 404, and the last request tells instead); a
 * ComfyUI server's `/system_stats` (ComfyUI server API (observed), Routes), which every ComfyUI serves.
 */
const HEALTH_PATHS: Record<ConnectionApi, string> = {
  v2: '/api/v2/health',
  v1: '/api/v2/health',
  comfyui: '/system_stats',
};

/** The path of a connection's health probe for `api` ({@link HEALTH_PATHS}), starting with `/`. */
export function healthPathOf(api: ConnectionApi): string {
  return HEALTH_PATHS[api];
}

/** True when a connection speaking `api` should tell the person it is deprecated ({@link DEPRECATED_APIS}). */
export function isDeprecatedApi(api: ConnectionApi): boolean {
  return DEPRECATED_APIS[api];
}

/** The active connection: its name, its kind (`default` for the one made of `comfyCloud.baseUrl`) and surface. */
export interface ActiveConnection {
  name: string;
  kind: ConnectionKind | 'default';
  surface: Surface;
  /** The API it speaks: `v2` unless the entry says `v1` (the default connection is always v2). */
  api: ConnectionApi;
  /** Set when the settings hold a deployment's address in the old form: what was used before and what is now. */
  legacy?: LegacyAddress;
}

/** A connection's base URL and, when its setting is in the old form, what that form meant ({@link LegacyAddress}). */
interface ConnectionAddress {
  baseUrl: string;
  legacy?: LegacyAddress;
}

/** The name shown for the default connection (the one made of `comfyCloud.baseUrl`). */
export const DEFAULT_CONNECTION_NAME = 'Default';
/** Longest connection name, characters (a name is shown in the status bar). */
export const MAX_CONNECTION_NAME = 64;
/** Most connections read from the settings (more is a mistake, not a use). */
const MAX_CONNECTIONS = 100;

function bad(message: string): InputError {
  return new InputError('bad_connection', `Setting comfyCloud.connections: ${message}`);
}

/**
 * Checks the raw `comfyCloud.connections` value: an array of `{name, surface, baseUrl?, deploymentId?, api?}`, names
 * unique (case-sensitive), trimmed and non-empty, not the default's name; a cloud, companion or emulator entry has
 * a `baseUrl`, a deployment a `deploymentId`. URLs are checked when the entry is resolved ({@link resolveConnection}),
 * so one bad URL does not hide the others.
 * @throws InputError `bad_connection` naming the entry (by index or name) and what is wrong.
 */
export function parseConnections(raw: unknown): ConnectionEntry[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw bad('must be a list of connections.');
  if (raw.length > MAX_CONNECTIONS) throw bad(`at most ${MAX_CONNECTIONS} connections.`);
  const seen = new Set<string>();
  return raw.map((item: unknown, i) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw bad(`entry ${i + 1} is not an object.`);
    const o = item as Record<string, unknown>;
    const name = typeof o.name === 'string' ? o.name.trim() : '';
    if (!name) throw bad(`entry ${i + 1} has no name.`);
    if (name.length > MAX_CONNECTION_NAME)
      throw bad(`the name of entry ${i + 1} is longer than ${MAX_CONNECTION_NAME} characters.`);
    if (name === DEFAULT_CONNECTION_NAME)
      throw bad(
        `"${DEFAULT_CONNECTION_NAME}" is the name of the connection made of comfyCloud.baseUrl; choose another.`,
      );
    if (seen.has(name)) throw bad(`two connections are named "${name}".`);
    seen.add(name);
    const surface = o.surface;
    if (typeof surface !== 'string' || !(CONNECTION_KINDS as readonly string[]).includes(surface)) {
      throw bad(`"${name}" has surface ${JSON.stringify(surface)}; use one of ${CONNECTION_KINDS.join(', ')}.`);
    }
    if (o.baseUrl !== undefined && typeof o.baseUrl !== 'string')
      throw bad(`the baseUrl of "${name}" is not a string.`);
    if (o.deploymentId !== undefined && typeof o.deploymentId !== 'string')
      throw bad(`the deploymentId of "${name}" is not a string.`);
    if (o.api !== undefined && (typeof o.api !== 'string' || !(CONNECTION_APIS as readonly string[]).includes(o.api))) {
      throw bad(
        `"${name}" has api ${JSON.stringify(o.api)}; use "v2" (the default), "v1" (deprecated) or "comfyui" (a ComfyUI server).`,
      );
    }
    const api = (o.api ?? 'v2') as ConnectionApi;
    if (api !== 'v2' && surface === 'deployment')
      throw bad(`the deployment "${name}" speaks v2 only; remove its "api": "${api}".`);
    const entry: ConnectionEntry = { name, surface: surface as ConnectionKind };
    if (api !== 'v2') entry.api = api;
    if (o.baseUrl) entry.baseUrl = o.baseUrl;
    if (surface === 'deployment') {
      if (!o.deploymentId) throw bad(`the deployment "${name}" has no deploymentId.`);
      entry.deploymentId = o.deploymentId;
    } else if (!entry.baseUrl) {
      throw bad(`"${name}" has no baseUrl.`);
    }
    return entry;
  });
}

/**
 * The base URL of one entry (see {@link connectionAddress}).
 * @throws as {@link connectionAddress}.
 */
export function connectionBaseUrl(
  entry: ConnectionEntry,
  deploymentDomain: string = DEFAULT_DEPLOYMENT_DOMAIN,
): string {
  return connectionAddress(entry, deploymentDomain).baseUrl;
}

/**
 * The address of one entry. Rule: Job and Asset API v2, What the service does (a deployment id is a DNS-safe subdomain
 * label) and its OpenAPI document's `servers` (a deployment has a host of its own, `https://{id}.run.comfy.app`):
 * - a deployment: `https://{deploymentId}.{deploymentDomain}` ({@link deploymentBaseUrl}); a `baseUrl` on it is the old
 *   form (an earlier version made `{baseUrl}/deployment/{id}` of it, an address the public contract does not have):
 *   not used, and reported in `legacy`;
 * - any other: its own `baseUrl`, except the old form `https://cloud.comfy.org/deployment/{id}`, moved to the
 *   deployment's own host and reported in `legacy` ({@link legacyDeploymentAddress}); another `/deployment/{id}` prefix
 *   (a gateway or an emulator mounting a deployment's API there) is used as it is.
 * @throws InputError `bad_connection` (with the cause's words) for a bad URL or deployment id; `bad_deployment_domain`
 *   (naming the setting) for a bad `deploymentDomain` when a deployment's URL is built from it.
 */
function connectionAddress(
  entry: ConnectionEntry,
  deploymentDomain: string = DEFAULT_DEPLOYMENT_DOMAIN,
): ConnectionAddress {
  try {
    if (entry.surface === 'deployment') {
      const id = entry.deploymentId ?? '';
      // The id first: a bad id is the entry's fault, whatever the domain.
      deploymentBaseUrl(id);
      const baseUrl = withSettingName(() => deploymentBaseUrl(id, deploymentDomain));
      if (entry.baseUrl === undefined) return { baseUrl };
      return {
        baseUrl,
        legacy: {
          before: `${oldCloudBase(entry.baseUrl)}/deployment/${entry.deploymentId}`,
          now: baseUrl,
          deploymentId: entry.deploymentId ?? '',
        },
      };
    }
    return baseUrlAddress(entry.baseUrl ?? '', deploymentDomain);
  } catch (err) {
    if (InputError.is(err) && err.code !== 'bad_connection' && err.code !== 'bad_deployment_domain')
      throw bad(`"${entry.name}": ${err.message}`);
    throw err;
  }
}

/**
 * A base URL's address: itself, or the deployment's own host for the old form ({@link legacyDeploymentAddress}).
 * @throws InputError `bad_base_url`; `bad_deployment_domain` naming the setting.
 */
function baseUrlAddress(baseUrl: string, domain: string): ConnectionAddress {
  const legacy = withSettingName(() => legacyDeploymentAddress(baseUrl, domain));
  return legacy ? { baseUrl: legacy.now, legacy } : { baseUrl: surfaceFromBaseUrl(baseUrl).baseUrl };
}

/** The cloud base URL as the earlier version used it (normalised, any `/deployment/{id}` it had removed), or as written. */
function oldCloudBase(raw: string): string {
  try {
    return normalizeBaseUrl(raw).replace(/\/deployment\/[^/]+$/, '');
  } catch {
    return raw.trim();
  }
}

/** `make()`, a `bad_deployment_domain` it throws naming the setting the domain comes from. */
function withSettingName<T>(make: () => T): T {
  try {
    return make();
  } catch (err) {
    if (InputError.is(err) && err.code === 'bad_deployment_domain')
      throw new InputError(err.code, `Setting comfyCloud.deploymentDomain: ${err.message}`);
    throw err;
  }
}

/**
 * The active connection: `activeName` empty is the default connection, made of `defaultBaseUrl`
 * (`comfyCloud.baseUrl`, unchanged in meaning but for the old form of a deployment's URL, see
 * {@link connectionAddress}); otherwise the entry of that name in `rawConnections`. A deployment's URL is built under
 * `deploymentDomain` (`comfyCloud.deploymentDomain`, default `run.comfy.app`). A deployment entry is a `deployment`
 * surface whatever its domain.
 * @throws InputError `bad_connection` for a bad list or entry, `unknown_connection` for a name not in the list,
 *   `bad_base_url` for a bad default base URL, `bad_deployment_domain` for a bad domain a URL is built under.
 */
export function resolveConnection(
  rawConnections: unknown,
  activeName: string,
  defaultBaseUrl: string,
  deploymentDomain: string = DEFAULT_DEPLOYMENT_DOMAIN,
): ActiveConnection {
  const name = activeName.trim();
  if (!name || name === DEFAULT_CONNECTION_NAME) {
    const address = baseUrlAddress(defaultBaseUrl, deploymentDomain);
    return withLegacy(
      { name: DEFAULT_CONNECTION_NAME, kind: 'default', surface: surfaceFromBaseUrl(address.baseUrl), api: 'v2' },
      address,
    );
  }
  const all = parseConnections(rawConnections);
  const entry = all.find((c) => c.name === name);
  if (!entry) {
    throw new InputError(
      'unknown_connection',
      `Setting comfyCloud.activeConnection: there is no connection named "${name}" in comfyCloud.connections. Choose one with "Comfy Cloud: Switch Connection", or clear the setting to use comfyCloud.baseUrl.`,
    );
  }
  const address = connectionAddress(entry, deploymentDomain);
  const surface = surfaceFromBaseUrl(address.baseUrl);
  if (entry.surface === 'deployment') surface.kind = 'deployment';
  return withLegacy({ name, kind: entry.surface, surface, api: entry.api ?? 'v2' }, address);
}

function withLegacy(active: ActiveConnection, address: ConnectionAddress): ActiveConnection {
  if (address.legacy) active.legacy = address.legacy;
  return active;
}

/**
 * `list` with `entry` added, or replacing the entry of the same name (the emulator's port changes at each start).
 * @throws InputError `bad_connection` when the result is not a valid list; `bad_deployment_domain` when a deployment's
 *   URL cannot be built under `deploymentDomain`.
 */
export function upsertConnection(
  rawConnections: unknown,
  entry: ConnectionEntry,
  deploymentDomain: string = DEFAULT_DEPLOYMENT_DOMAIN,
): ConnectionEntry[] {
  const list = parseConnections(rawConnections).filter((c) => c.name !== entry.name.trim());
  const next = [...list, { ...entry, name: entry.name.trim() }];
  const parsed = parseConnections(next);
  connectionBaseUrl(parsed[parsed.length - 1]!, deploymentDomain);
  return parsed;
}

/**
 * Whether requests to the active connection need an API key to be accepted: the managed cloud and a serverless
 * deployment always do (Job and Asset API v2, Authentication, rule 2); a self-hosted companion or the emulator only
 * when it was started with a token, which the client cannot know before asking. The default connection
 * (`comfyCloud.baseUrl`) follows the surface its URL implies (surface.ts {@link surfaceFromBaseUrl}).
 */
export function needsApiKey(active: ActiveConnection): boolean {
  if (active.kind === 'cloud' || active.kind === 'deployment') return true;
  if (active.kind === 'default') return active.surface.kind !== 'self-hosted';
  return false;
}

/**
 * The environment variable that carries the owner token to an emulator started for an editor's windows (`comfy-cloud
 * emulator --owner-grace-ms`): the environment, because the process list shows a command's arguments to every user.
 */
export const EMULATOR_OWNER_TOKEN_ENV = 'COMFY_EMULATOR_OWNER_TOKEN';

/**
 * Whether the active connection is the local emulator connection of a previous extension host whose child died with
 * it (then the status bar offers to start the emulator again): it is the emulator connection named `emulatorName`
 * ("Start Local Emulator" writes it), no emulator child of this extension serves its base URL (`ownEmulatorUrl`,
 * undefined when none runs), and its base URL does not answer (`health` `unreachable`). Another window's emulator still
 * running on that port answers, so that connection is not stale.
 */
export function isStaleEmulatorConnection(
  active: ActiveConnection | undefined,
  emulatorName: string,
  ownEmulatorUrl: string | undefined,
  health: string | undefined,
): boolean {
  if (!active || active.kind !== 'emulator' || active.name !== emulatorName) return false;
  return ownEmulatorUrl !== active.surface.baseUrl && health === 'unreachable';
}

/**
 * How usable the active connection is, as the Jobs view's welcome and the walkthrough see it (welcome views when
 * there is no connection or no job); the value of the context key `comfyCloud.connectionState`:
 * - `invalid`: the settings do not resolve to a connection (a bad list, name or URL);
 * - `stale`: the local emulator connection of a previous session, its emulator gone ({@link isStaleEmulatorConnection});
 * - `noKey`: a surface that needs an API key ({@link needsApiKey}) and none is stored for its origin;
 * - `unconfigured`: nothing configured (no connection, no active one, `comfyCloud.baseUrl` left at its default) and
 *   the default address does not answer the health probe (no companion runs there);
 * - `ready`: anything else: requests can be made (they may still fail, which the status bar's health says).
 */
export type ConnectionReadiness = 'ready' | 'invalid' | 'stale' | 'noKey' | 'unconfigured';

/** The facts {@link connectionReadiness} decides from. */
export interface ReadinessFacts {
  /** The active connection; undefined when the settings are unusable. */
  active: ActiveConnection | undefined;
  /** Whether an API key is stored for the active connection's origin. */
  hasKey: boolean;
  /** Whether the user configured anything (a connection, an active name, or their own `comfyCloud.baseUrl`). */
  configured: boolean;
  /** The last health state seen of the active connection (undefined while the first probe runs). */
  health: HealthStateName | undefined;
  /** {@link isStaleEmulatorConnection} for the active connection. */
  staleEmulator: boolean;
}

/** The health states (health.ts `HealthState`), repeated here so this module stays free of the probe's imports. */
type HealthStateName = 'ok' | 'unsupported' | 'unauthorized' | 'error' | 'unreachable';

/** The readiness of the active connection, from its facts (see {@link ConnectionReadiness} for the order of rules). */
export function connectionReadiness(facts: ReadinessFacts): ConnectionReadiness {
  const { active } = facts;
  if (!active) return 'invalid';
  if (facts.staleEmulator) return 'stale';
  if (needsApiKey(active) && !facts.hasKey) return 'noKey';
  if (!facts.configured && facts.health !== 'ok') return 'unconfigured';
  return 'ready';
}
