/**
 * Connections: a name, a surface (managed cloud, serverless deployment, self-hosted
 * companion, local emulator) and its base URL. Several can exist, one is active; switching changes only the base
 * address and the credential (Job and Asset API v2, What the service does: one contract on every surface, moved between
 * by the base address). The list comes from the user's settings: untrusted input, checked here entry by entry.
 */
import { InputError } from '../http/errors';
import { deploymentBaseUrl, surfaceFromBaseUrl, type Surface } from '../v2/surface';

/** The kinds of connection a user can add. */
export const CONNECTION_KINDS = ['cloud', 'deployment', 'companion', 'emulator'] as const;
export type ConnectionKind = (typeof CONNECTION_KINDS)[number];

/** One configured connection, as stored in `comfyCloud.connections`. */
export interface ConnectionEntry {
  /** Unique, non-empty, at most {@link MAX_CONNECTION_NAME} characters. */
  name: string;
  surface: ConnectionKind;
  /** The server's base URL; for a deployment, the cloud's base URL its prefix is added to. */
  baseUrl?: string;
  /** A serverless deployment's id (a DNS label): only for `surface: 'deployment'`. */
  deploymentId?: string;
  /**
   * Which API the server is spoken to in: `v2` (the default, Job and Asset API v2) or the deprecated `v1`
   * (Cloud API v1 (deprecated): the managed cloud's v1, or a local engine's own API). Not for a deployment (v2 only).
   */
  api?: ConnectionApi;
}

/** The APIs a connection can speak: v2, or the deprecated v1. */
export const CONNECTION_APIS = ['v2', 'v1'] as const;
export type ConnectionApi = (typeof CONNECTION_APIS)[number];

/** The active connection: its name, its kind (`default` for the one made of `comfyCloud.baseUrl`) and surface. */
export interface ActiveConnection {
  name: string;
  kind: ConnectionKind | 'default';
  surface: Surface;
  /** The API it speaks: `v2` unless the entry says `v1` (the default connection is always v2). */
  api: ConnectionApi;
}

/** The name shown for the default connection (the one made of `comfyCloud.baseUrl`). */
export const DEFAULT_CONNECTION_NAME = 'Default';
/** Longest connection name, characters (a name is shown in the status bar). */
export const MAX_CONNECTION_NAME = 64;
/** Most connections read from the settings (more is a mistake, not a use). */
export const MAX_CONNECTIONS = 100;

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
    if (name.length > MAX_CONNECTION_NAME) throw bad(`the name of entry ${i + 1} is longer than ${MAX_CONNECTION_NAME} characters.`);
    if (name === DEFAULT_CONNECTION_NAME) throw bad(`"${DEFAULT_CONNECTION_NAME}" is the name of the connection made of comfyCloud.baseUrl; choose another.`);
    if (seen.has(name)) throw bad(`two connections are named "${name}".`);
    seen.add(name);
    const surface = o.surface;
    if (typeof surface !== 'string' || !(CONNECTION_KINDS as readonly string[]).includes(surface)) {
      throw bad(`"${name}" has surface ${JSON.stringify(surface)}; use one of ${CONNECTION_KINDS.join(', ')}.`);
    }
    if (o.baseUrl !== undefined && typeof o.baseUrl !== 'string') throw bad(`the baseUrl of "${name}" is not a string.`);
    if (o.deploymentId !== undefined && typeof o.deploymentId !== 'string') throw bad(`the deploymentId of "${name}" is not a string.`);
    if (o.api !== undefined && (typeof o.api !== 'string' || !(CONNECTION_APIS as readonly string[]).includes(o.api))) {
      throw bad(`"${name}" has api ${JSON.stringify(o.api)}; use "v2" (the default) or "v1" (deprecated).`);
    }
    if (o.api === 'v1' && surface === 'deployment') throw bad(`the deployment "${name}" speaks v2 only; remove its "api": "v1".`);
    const entry: ConnectionEntry = { name, surface: surface as ConnectionKind };
    if (o.api === 'v1') entry.api = 'v1';
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
 * The base URL of one entry: its own for a cloud, companion or emulator; for a deployment, its `baseUrl` (or
 * else the first cloud connection's) with `/deployment/{id}` (the mount prefix a deployment's gateway may use: Job and
 * Asset API v2, Job `urls`; {@link deploymentBaseUrl}).
 * @throws InputError `bad_connection` (with the cause's words) for a bad URL, a bad deployment id, or a deployment
 *   with no cloud base URL to derive from.
 */
export function connectionBaseUrl(entry: ConnectionEntry, all: readonly ConnectionEntry[] = []): string {
  try {
    if (entry.surface !== 'deployment') return surfaceFromBaseUrl(entry.baseUrl ?? '').baseUrl;
    const cloud = entry.baseUrl ?? all.find((c) => c.surface === 'cloud')?.baseUrl;
    if (!cloud) throw bad(`the deployment "${entry.name}" needs the cloud's base URL: give it a baseUrl, or add a cloud connection.`);
    return deploymentBaseUrl(cloud, entry.deploymentId ?? '');
  } catch (err) {
    if (InputError.is(err) && err.code !== 'bad_connection') throw bad(`"${entry.name}": ${err.message}`);
    throw err;
  }
}

/**
 * The active connection: `activeName` empty is the default connection, made of `defaultBaseUrl`
 * (`comfyCloud.baseUrl`, unchanged in meaning); otherwise the entry of that name in `rawConnections`.
 * @throws InputError `bad_connection` for a bad list or entry, `unknown_connection` for a name not in the list,
 *   `bad_base_url` for a bad default base URL.
 */
export function resolveConnection(rawConnections: unknown, activeName: string, defaultBaseUrl: string): ActiveConnection {
  const name = activeName.trim();
  if (!name || name === DEFAULT_CONNECTION_NAME) {
    return { name: DEFAULT_CONNECTION_NAME, kind: 'default', surface: surfaceFromBaseUrl(defaultBaseUrl), api: 'v2' };
  }
  const all = parseConnections(rawConnections);
  const entry = all.find((c) => c.name === name);
  if (!entry) {
    throw new InputError('unknown_connection', `Setting comfyCloud.activeConnection: there is no connection named "${name}" in comfyCloud.connections. Choose one with "Comfy Cloud: Switch Connection", or clear the setting to use comfyCloud.baseUrl.`);
  }
  return { name, kind: entry.surface, surface: surfaceFromBaseUrl(connectionBaseUrl(entry, all)), api: entry.api ?? 'v2' };
}

/**
 * `list` with `entry` added, or replacing the entry of the same name (the emulator's port changes at each start).
 * @throws InputError `bad_connection` when the result is not a valid list.
 */
export function upsertConnection(rawConnections: unknown, entry: ConnectionEntry): ConnectionEntry[] {
  const list = parseConnections(rawConnections).filter((c) => c.name !== entry.name.trim());
  const next = [...list, { ...entry, name: entry.name.trim() }];
  const parsed = parseConnections(next);
  connectionBaseUrl(parsed[parsed.length - 1]!, parsed);
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
 * Whether the active connection is the local emulator connection of a previous extension host whose child died with
 * it (then the status bar offers to start the emulator again): it is the emulator connection named `emulatorName`
 * ("Start Local Emulator" writes it), no emulator child of this extension serves its base URL (`ownEmulatorUrl`,
 * undefined when none runs), and its base URL does not answer (`health` `unreachable`). Another window's emulator still
 * running on that port answers, so that connection is not stale.
 */
export function isStaleEmulatorConnection(active: ActiveConnection | undefined, emulatorName: string, ownEmulatorUrl: string | undefined, health: string | undefined): boolean {
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
