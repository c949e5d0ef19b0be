import * as vscode from 'vscode';
import { parseConnections, type ConnectionEntry } from '../../core/connection';
import type { Clock, FetchFunction } from '../../core/http';
import type { Config } from '../platform/config';
import { COMFYUI_BASE_URL, COMFYUI_CONNECTION_NAME, COMFYUI_OFFER_DECLINED_KEY } from '../platform/constants';
import type { Display } from '../platform/display';
import type { Log } from '../platform/log';
import { comfyUIOfferDecision, probeComfyUI, type ComfyUIOfferDecision } from './comfyuiProbe';
import { freeName } from './connectionNames';

/**
 * What one {@link ComfyUIOffer.check} came to: a {@link ComfyUIOfferDecision} that stopped it before the probe,
 * `absent` (nothing answered as ComfyUI), `offered` (already offered in this session), or the person's answer:
 * `added`, `notNow` (remembered), `dismissed` (closed unanswered: asked again at a later start).
 */
export type ComfyUIOfferOutcome =
  Exclude<ComfyUIOfferDecision, 'probe'> | 'absent' | 'offered' | 'added' | 'notNow' | 'dismissed';

/** Options of {@link ComfyUIOffer}: the probe's transport and clock (tests point them at a loopback server). */
export interface ComfyUIOfferOptions {
  fetch?: FetchFunction;
  clock?: Clock;
  timeoutMs?: number;
}

/**
 * The offer, once, of a ComfyUI server running on this machine (by default at {@link COMFYUI_BASE_URL}): when no
 * connection points at it yet and the person never said "Not Now", a probe of `GET /system_stats`
 * (comfyuiProbe.ts); when it answers, a notification "A ComfyUI server is running at … Add it as a connection?"
 * [Add Connection] [Not Now]. Add Connection writes `{name: "ComfyUI", surface: "companion", baseUrl, api: "comfyui"}`
 * (a self-hosted server on this machine) and makes it active; "Not Now" is remembered in globalState.
 */
export class ComfyUIOffer {
  /** Set once the offer was shown in this session: it is made once. */
  private shown = false;

  constructor(
    private readonly config: Pick<Config, 'connectionsRaw' | 'defaultBaseUrl' | 'addConnection'>,
    private readonly state: vscode.Memento,
    private readonly display: Pick<Display, 'info'>,
    private readonly log: Log,
    private readonly options: ComfyUIOfferOptions = {},
  ) {}

  /**
   * Looks for a ComfyUI server at `baseUrl` and offers it (see the class comment). Never rejects; resolves what
   * happened. Runs in the background at start-up (activation never waits for it).
   */
  async check(baseUrl: string = COMFYUI_BASE_URL): Promise<ComfyUIOfferOutcome> {
    if (this.shown) return 'offered';
    const decision = comfyUIOfferDecision({
      baseUrl,
      declined: this.state.get<boolean>(COMFYUI_OFFER_DECLINED_KEY) === true,
      connections: this.connections(),
      defaultBaseUrl: this.config.defaultBaseUrl(),
    });
    if (decision !== 'probe') return decision;
    const found = await probeComfyUI({ baseUrl, ...this.options });
    if (!found) return 'absent';
    // Checked again after the wait: a second check (or a connection added meanwhile) does not offer it twice.
    if (this.shown) return 'offered';
    this.shown = true;
    this.log.info('connections', `a ComfyUI server answers at ${baseUrl}: offered as a connection`);
    const add = vscode.l10n.t('Add Connection');
    const notNow = vscode.l10n.t('Not Now');
    const answer = await this.display.info(
      vscode.l10n.t('Comfy Cloud: A ComfyUI server is running at {0}. Add it as a connection?', baseUrl),
      add,
      notNow,
    );
    if (answer === notNow) {
      await this.state.update(COMFYUI_OFFER_DECLINED_KEY, true);
      return 'notNow';
    }
    if (answer !== add) return 'dismissed';
    const list = this.connections() ?? [];
    const entry: ConnectionEntry = {
      name: freeName(COMFYUI_CONNECTION_NAME, new Set(list.map((c) => c.name))),
      surface: 'companion',
      baseUrl,
      api: 'comfyui',
    };
    try {
      await this.config.addConnection(entry);
    } catch (err) {
      this.log.warn(
        'connections',
        `cannot add the ComfyUI server: ${err instanceof Error ? err.message : String(err)}`,
      );
      return 'dismissed';
    }
    this.log.info('connections', `added "${entry.name}" (ComfyUI server at ${baseUrl})`);
    return 'added';
  }

  private connections(): ConnectionEntry[] | undefined {
    try {
      return parseConnections(this.config.connectionsRaw());
    } catch {
      return undefined;
    }
  }
}
