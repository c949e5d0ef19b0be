/**
 * The deprecated v1 surface of the emulator (Cloud API v1 (deprecated)), over the same job engine, blobs and signed
 * URLs as v2: a job submitted through POST /api/prompt is a job of the shared store (GET /api/v2/jobs/{id} shows it
 * too), served under the same origin and mount prefix at the document's `/api/...` paths, plus the WebSocket `/ws`.
 * See routes.ts (REST), socket.ts (the WebSocket), messages.ts (its messages), frames.ts (binary frames).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Faults } from '../faults';
import type { Route } from '../router';
import type { RecordedRequest } from '../router';
import type { UrlSigner } from '../signing';
import type { AssetStore } from '../v2/assets';
import type { JobStore } from '../v2/jobs';
import type { JobRunner } from '../v2/runner';
import { apiKeyAuth, keyCheck } from './auth';
import { EngineMessages, type TappedEventHub } from './messages';
import { v1Routes } from './routes';
import { SocketHub } from './socket';
import { V1State, type StatusVocabulary, type V1PromptRecord } from './state';

export {
  BINARY_EVENT,
  IMAGE_TYPE,
  previewImageFrame,
  previewWithMetadataFrame,
  textFrame,
  type PreviewMetadata,
} from './frames';
export { TappedEventHub } from './messages';
export type { StatusVocabulary, V1PromptRecord } from './state';

/** Options of the v1 surface (`EmulatorOptions.v1`). Every field is optional. */
export interface V1Options {
  /** The vocabulary of GET /api/job/{id}/status (state.ts): `document` (default: `success`, …) or `public` (`completed`, …). */
  statusVocabulary?: StatusVocabulary;
  /** Serve GET /api/jobs/{prompt_id} (default true). false: it answers 404, so a client's history_v2 fallback runs. */
  jobsEndpoint?: boolean;
  /** Serve GET /api/object_info/{class} (default false: the document shows only the whole map; a client filters it). */
  perClassObjectInfo?: boolean;
}

/** What a test can see and change of a running v1 surface (`Emulator.v1`). */
export interface V1Handle {
  /** `ws://host:port<mount prefix>/ws` (add `?clientId=<uuid>&token=<key>`). */
  readonly wsUrl: string;
  /** Every accepted POST /api/prompt, in order: the partner key as received (kept in memory only, never logged). */
  readonly prompts: readonly V1PromptRecord[];
  /** Switches the status endpoint's vocabulary (for every job, from the next request). */
  setStatusVocabulary(vocabulary: StatusVocabulary): void;
  /**
   * Makes GET /api/job/{promptId}/status answer `status` verbatim (e.g. `non_retryable_error`, `lost`, an unknown
   * in-flight value) until cleared with undefined. @throws TypeError for a prompt id the v1 surface does not know.
   */
  forceStatus(promptId: string, status: string | undefined): void;
  /** How many WebSocket connections are open (all keys). */
  openSockets(): number;
}

/** What the v1 surface needs from the emulator. */
interface V1Deps {
  readonly options: V1Options;
  readonly tokens: readonly string[];
  readonly mountPrefix: string;
  readonly jobs: JobStore;
  readonly assets: AssetStore;
  readonly runner: JobRunner;
  readonly hub: TappedEventHub;
  readonly faults: Faults;
  readonly signer: UrlSigner;
  /** The emulator's request record: WebSocket upgrades are appended to it. */
  readonly requests: RecordedRequest[];
  readonly now: () => number;
  readonly log?: (line: string) => void;
}

/** A built v1 surface: its routes, its upgrade listener, its handle, its close. */
interface V1Surface {
  readonly routes: Route[];
  /** The server's `upgrade` listener part: false when the request is not for `/ws`. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** The handle, once the origin is known. */
  handle(origin: string): V1Handle;
  /** Closes every WebSocket and refuses new ones. */
  close(): void;
}

/**
 * Builds the v1 surface and taps the engine's hub.
 * @throws TypeError for an invalid option.
 */
export function createV1Surface(deps: V1Deps): V1Surface {
  const vocabulary = deps.options.statusVocabulary ?? 'document';
  if (vocabulary !== 'document' && vocabulary !== 'public')
    throw new TypeError(`v1.statusVocabulary must be "document" or "public"; got ${JSON.stringify(vocabulary)}`);
  const state = new V1State(vocabulary);
  const keys = keyCheck(deps.tokens);
  const messages: EngineMessages = new EngineMessages({
    state,
    sockets: () => sockets,
    jobs: deps.jobs,
    assets: deps.assets,
    now: deps.now,
  });
  const sockets: SocketHub = new SocketHub({
    mountPrefix: deps.mountPrefix,
    keys,
    faults: deps.faults,
    requests: deps.requests,
    log: deps.log,
    greeting: (owner, clientId) => {
      const status = messages.statusMessage(owner);
      // The engine names the connection in its first status message.
      return { type: status.type, data: { ...status.data, sid: clientId } };
    },
  });
  deps.hub.tap = (jobId, event) => {
    // A failure here is a bug of the v1 surface: logged, never turned into a failure of the job that published.
    try {
      messages.handle(jobId, event);
    } catch (e) {
      deps.log?.(`v1 messages of job ${jobId} failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    }
  };
  const routes = v1Routes({
    state,
    jobs: deps.jobs,
    assets: deps.assets,
    runner: deps.runner,
    faults: deps.faults,
    signer: deps.signer,
    auth: apiKeyAuth(keys),
    jobsEndpoint: deps.options.jobsEndpoint ?? true,
    perClassObjectInfo: deps.options.perClassObjectInfo ?? false,
  });
  return {
    routes,
    handleUpgrade: (req, socket, head) => sockets.handleUpgrade(req, socket, head),
    handle: (origin) => ({
      wsUrl: `${origin.replace(/^http/, 'ws')}${deps.mountPrefix}/ws`,
      prompts: state.prompts,
      setStatusVocabulary(v) {
        if (v !== 'document' && v !== 'public')
          throw new TypeError(`the status vocabulary is "document" or "public"; got ${JSON.stringify(v)}`);
        state.vocabulary = v;
      },
      forceStatus(promptId, status) {
        const job = state.jobs.get(promptId);
        if (job === undefined) throw new TypeError(`no v1 job ${JSON.stringify(promptId)}`);
        job.forcedStatus = status;
      },
      openSockets: () => sockets.openCount(),
    }),
    close: () => sockets.close(),
  };
}
