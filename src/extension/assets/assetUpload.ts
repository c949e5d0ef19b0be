/**
 * "Upload to Comfy Cloud" of the Assets feature: the files chosen (the Explorer's selection, else an open dialog)
 * uploaded one after the other through the job service's asset client, in one cancellable progress notification,
 * each remembered in the Assets view, and what happened said once.
 */
import * as vscode from 'vscode';
import * as path from 'node:path';
import { AbortError, ComfyError } from '../../core';
import { errorMessage } from '../../core/views';
import { humanSize } from '../../core/util';
import { uploadRecord } from '../../core/state';
import type { UploadPhase } from '../../core/backends';
import type { AssetsView } from './assetsView';
import { assetClient, noAssets } from './assetClient';
import { toAbortSignal } from '../platform/cancellation';
import type { Display } from '../platform/display';
import type { JobServiceHost } from '../platform/jobServiceHost';
import type { Log } from '../platform/log';

/** What "Upload to Comfy Cloud" returns per file (for tests and other extensions). */
export interface UploadOutcome {
  /** The local file's path. */
  file: string;
  assetId?: string;
  /** True for a dedup hit: the bytes were already there and none were sent. */
  dedup?: boolean;
  hash?: string;
  sizeBytes?: number | null;
  /** Why the file was not uploaded (`canceled` when the user stopped it). */
  error?: { code: string; message: string };
}

/** The uploads of the asset commands. Every request goes through the job service's client of the active connection. */
export class AssetUploads {
  constructor(
    private readonly jobs: JobServiceHost,
    private readonly assets: AssetsView,
    private readonly display: Display,
    private readonly log: Log,
  ) {}

  /**
   * Uploads files (the Explorer's `(uri, selected uris)`, or a file dialog from the view's title) one after the
   * other, in one cancellable progress notification: "Hashing name…" then "Sending name (size)…" (or "Found name
   * on the server…" for a dedup hit). Each upload is remembered (shown in the Assets view, shared with the CLI). Says
   * "Uploaded name (size)" or "name is already there: no bytes sent"; several files, one summary.
   */
  async upload(uri?: unknown, uris?: unknown): Promise<UploadOutcome[]> {
    const chosen =
      Array.isArray(uris) && uris.length > 0
        ? uris.filter((u): u is vscode.Uri => u instanceof vscode.Uri)
        : uri instanceof vscode.Uri
          ? [uri]
          : await this.pickFiles();
    if (chosen.length === 0) return [];
    const outcomes: UploadOutcome[] = [];
    const local = chosen.filter((u) => u.scheme === 'file');
    for (const u of chosen.filter((x) => x.scheme !== 'file')) {
      const message = vscode.l10n.t(
        "{0} is not on this machine's disk; only local files can be uploaded.",
        u.toString(),
      );
      outcomes.push({ file: u.toString(), error: { code: 'not_local', message } });
      void this.display.error(vscode.l10n.t('Comfy Cloud: {0}', message));
    }
    if (local.length === 0) return outcomes;

    let lease;
    try {
      lease = await this.jobs.service.lease();
    } catch (err) {
      void this.display.error(vscode.l10n.t('Comfy Cloud: cannot upload: {0}', errorMessage(err, vscode.l10n.t)));
      return [...outcomes, ...local.map((u) => ({ file: u.fsPath, error: errorOf(err) }))];
    }
    const client = assetClient(lease);
    if (!client) {
      // An API without assets (capabilities.assets): say so, send nothing.
      lease.release();
      const { code, message } = noAssets(lease);
      void this.display.error(vscode.l10n.t('Comfy Cloud: cannot upload: {0}', message));
      return [...outcomes, ...local.map((u) => ({ file: u.fsPath, error: { code, message } }))];
    }
    try {
      await vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: vscode.l10n.t('Comfy Cloud: Upload'),
          cancellable: true,
        },
        async (progress, token) => {
          const cancellation = toAbortSignal(token);
          const signal = AbortSignal.any([cancellation.signal, lease.signal]);
          try {
            for (const [index, file] of local.map((u) => u.fsPath).entries()) {
              const name = path.basename(file);
              const counter = local.length > 1 ? vscode.l10n.t('({0} of {1}) ', index + 1, local.length) : '';
              const size = await vscode.workspace.fs.stat(vscode.Uri.file(file)).then(
                (s) => humanSize(s.size, vscode.l10n.t),
                () => '',
              );
              const say = (phase: UploadPhase): void => {
                const words: Record<UploadPhase, string> = {
                  hashing: vscode.l10n.t('Hashing {0}…', name),
                  checking: vscode.l10n.t('Hashing {0}…', name),
                  minting: vscode.l10n.t('Found {0} on the server: no bytes to send…', name),
                  sending: size ? vscode.l10n.t('Sending {0} ({1})…', name, size) : vscode.l10n.t('Sending {0}…', name),
                };
                this.display.report(progress, { message: counter + words[phase] });
              };
              if (signal.aborted) {
                outcomes.push({ file, error: { code: 'canceled', message: vscode.l10n.t('canceled') } });
                continue;
              }
              try {
                const up = await client.uploadFile(file, {}, { signal, onPhase: say });
                this.log.info(
                  'assets',
                  `${up.dedup ? 'dedup hit' : 'uploaded'} ${file} as asset ${up.asset.id} (${up.hash}, request-id ${up.requestId ?? '-'})`,
                );
                outcomes.push({
                  file,
                  assetId: up.asset.id,
                  dedup: up.dedup,
                  hash: up.hash,
                  sizeBytes: up.asset.size_bytes,
                });
                await this.assets.provider
                  .remember(uploadRecord(client.http.baseUrl, up, file, 'vscode'))
                  .catch((err: unknown) => {
                    this.log.warn(
                      'assets',
                      `cannot remember the upload of ${file}: ${errorMessage(err, vscode.l10n.t)}`,
                    );
                  });
              } catch (err) {
                const canceled = AbortError.is(err) && cancellation.signal.aborted;
                this.log.warn(
                  'assets',
                  `upload of ${file} ${canceled ? 'canceled' : `failed: ${errorMessage(err, vscode.l10n.t)}`}`,
                );
                outcomes.push({
                  file,
                  error: canceled ? { code: 'canceled', message: vscode.l10n.t('canceled') } : errorOf(err),
                });
                if (!canceled)
                  void this.display.error(
                    vscode.l10n.t('Comfy Cloud: cannot upload {0}: {1}', name, errorMessage(err, vscode.l10n.t)),
                  );
              }
            }
          } finally {
            cancellation.dispose();
          }
        },
      );
    } finally {
      lease.release();
    }
    this.announceUploads(outcomes);
    return outcomes;
  }

  /** Says what the uploads did: one file's result, or a summary of several. */
  private announceUploads(outcomes: UploadOutcome[]): void {
    const done = outcomes.filter((o) => o.assetId);
    if (outcomes.length === 1 && done.length === 1) {
      const o = done[0]!;
      const name = path.basename(o.file);
      void this.display.info(
        o.dedup
          ? vscode.l10n.t('Comfy Cloud: {0} is already there: no bytes sent.', name)
          : vscode.l10n.t(
              'Comfy Cloud: uploaded {0} ({1}).',
              name,
              humanSize(o.sizeBytes, vscode.l10n.t) || vscode.l10n.t('size unknown'),
            ),
      );
    } else if (done.length > 1 || (done.length === 1 && outcomes.length > 1)) {
      const deduped = done.filter((o) => o.dedup).length;
      void this.display.info(
        vscode.l10n.t(
          'Comfy Cloud: {0} of {1} files uploaded; {2} already there (no bytes sent).',
          done.length,
          outcomes.length,
          deduped,
        ),
      );
    }
  }

  /** The files to upload, from an open dialog (the view's title button, the command palette). */
  private async pickFiles(): Promise<vscode.Uri[]> {
    const picked = await vscode.window.showOpenDialog({
      canSelectMany: true,
      canSelectFiles: true,
      canSelectFolders: false,
      openLabel: vscode.l10n.t('Upload'),
      title: vscode.l10n.t('Upload to Comfy Cloud'),
    });
    return picked ?? [];
  }
}

/** The code and message of an error, as an outcome carries them. */
function errorOf(err: unknown): { code: string; message: string } {
  return { code: ComfyError.is(err) ? err.code : 'error', message: err instanceof Error ? err.message : String(err) };
}
