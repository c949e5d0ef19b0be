/**
 * The asset commands of the Assets feature (Upload, Download, Copy Reference, Copy Id, Delete, Refresh), each taking
 * a node of the Assets view, an asset id or an asset-like object; uploading itself is in assetUpload.ts.
 */
import * as vscode from 'vscode';
import * as os from 'node:os';
import * as path from 'node:path';
import { downloadedRecord, type AssetRecord } from '../../core/state';
import { AbortError, ApiError, NotFoundError } from '../../core';
import { AssetInUseError } from '../../core/backends';
import { errorMessage, assetReferenceJson } from '../../core/views';
import { humanSize, safeFileName } from '../../core/util';
import type { AssetsNode, AssetsView } from './assetsView';
import { requireAssets } from './assetClient';
import { AssetUploads, type UploadOutcome } from './assetUpload';
import { toAbortSignal } from '../platform/cancellation';
import { Commands, Views } from '../platform/constants';
import { Disposable } from '../platform/disposable';
import type { CommandHandlers } from '../platform/lazy';
import type { Display } from '../platform/display';
import type { JobServiceHost } from '../platform/jobServiceHost';
import type { Log } from '../platform/log';

/** What Delete did: `deleted`, `gone` (already gone from the server), `in_use` (asset_in_use), `kept` (not confirmed), `error`. */
export type DeleteOutcome = 'deleted' | 'gone' | 'in_use' | 'kept' | 'error';

/**
 * What the asset commands accept: a node of the Assets view, an asset id of the shown server, or an asset-like
 * object (`{assetId, hash?, fileName?}` or a job output `{id, hash?, name?}`), so another view can reuse them.
 */
type AssetArg =
  | AssetsNode
  | string
  | { assetId: string; hash?: string | null; fileName?: string }
  | { id: string; hash?: string | null; name?: string | null }
  | undefined;

/**
 * The asset commands: Upload to Comfy Cloud (Explorer context menu with
 * multi-select, the view's title), Download (resumable), Copy `core/ASSET` Reference, Copy Asset Id, Delete (with
 * `asset_in_use` explained) and Refresh. Every request goes through the job service's client of the active
 * connection (its API key from SecretStorage); none builds its own.
 */
export class AssetCommands extends Disposable {
  private readonly uploads: AssetUploads;

  constructor(
    private readonly jobs: JobServiceHost,
    private readonly assets: AssetsView,
    private readonly display: Display,
    private readonly log: Log,
  ) {
    super();
    this.uploads = new AssetUploads(jobs, assets, display, log);
  }

  /** The command ids this object handles, with their handlers (registered by the extension: lazy.ts). */
  commands(): CommandHandlers {
    return {
      [Commands.uploadAsset]: (uri?: unknown, uris?: unknown) => this.upload(uri, uris),
      [Commands.refreshAssets]: () => this.assets.provider.refresh(),
      [Commands.downloadAsset]: (arg?: AssetArg, target?: unknown) =>
        this.download(arg, typeof target === 'string' ? target : undefined),
      [Commands.copyAssetReference]: (arg?: AssetArg) => this.copyReference(arg),
      [Commands.copyAssetId]: (arg?: AssetArg) => this.copyId(arg),
      // `{confirmed: true}` (tests, other extensions) skips the modal; a menu passes the selection array instead.
      [Commands.deleteAsset]: (arg?: AssetArg, options?: unknown) =>
        this.delete(
          arg,
          typeof options === 'object' &&
            options !== null &&
            !Array.isArray(options) &&
            (options as { confirmed?: unknown }).confirmed === true,
        ),
    };
  }

  /** Uploads files: {@link AssetUploads.upload}. */
  upload(uri?: unknown, uris?: unknown): Promise<UploadOutcome[]> {
    return this.uploads.upload(uri, uris);
  }

  /**
   * Downloads an asset's content to a file chosen in a save dialog (default: the asset's safe name, in the
   * workspace folder), resuming a partial download of the same asset, with a cancellable progress notification
   * (bytes and percent). `target` (tests, other extensions) skips the dialog. Returns the file written.
   */
  async download(arg?: AssetArg, target?: string): Promise<string | undefined> {
    const record = this.recordOf(arg);
    if (!record) return undefined;
    const name = safeFileName(record.fileName, record.assetId);
    let file = target;
    if (!file) {
      const folder =
        vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file')?.uri ?? vscode.Uri.file(os.homedir());
      const chosen = await vscode.window.showSaveDialog({
        defaultUri: vscode.Uri.joinPath(folder, name),
        saveLabel: vscode.l10n.t('Download'),
        title: vscode.l10n.t('Download {0}', name),
      });
      if (!chosen) return undefined;
      if (chosen.scheme !== 'file') {
        void this.display.error(vscode.l10n.t("Comfy Cloud: choose a folder on this machine's disk to download to."));
        return undefined;
      }
      file = chosen.fsPath;
    }
    const where = file;
    try {
      const result = await vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: vscode.l10n.t('Comfy Cloud: Download {0}', name),
          cancellable: true,
        },
        (progress, token) =>
          this.jobs.service.use(async (lease) => {
            const cancellation = toAbortSignal(token);
            let reported = 0;
            try {
              return await requireAssets(lease).downloadAsset(record.assetId, where, {
                signal: AbortSignal.any([cancellation.signal, lease.signal]),
                // The save dialog asked about replacing an existing file.
                overwrite: true,
                onProgress: (received, total) => {
                  const percent = total ? Math.floor((received / total) * 100) : undefined;
                  const message = total
                    ? vscode.l10n.t(
                        '{0} of {1} ({2}%)',
                        humanSize(received, vscode.l10n.t),
                        humanSize(total, vscode.l10n.t),
                        percent!,
                      )
                    : humanSize(received, vscode.l10n.t);
                  const increment = percent !== undefined ? Math.max(0, percent - reported) : undefined;
                  if (percent !== undefined) reported = Math.max(reported, percent);
                  this.display.report(progress, { message, increment });
                },
              });
            } finally {
              cancellation.dispose();
            }
          }),
      );
      this.log.info(
        'assets',
        `asset ${record.assetId} saved to ${result.path} (${result.bytes} bytes, resumed from ${result.resumedFrom})`,
      );
      // An output remembers where it was saved; an upload keeps the file it came from.
      const next = downloadedRecord(record, result.path);
      if (next) await this.assets.provider.remember(next).catch(() => undefined);
      void this.display
        .info(
          vscode.l10n.t(
            'Comfy Cloud: saved {0} ({1}).',
            path.basename(result.path),
            humanSize(result.bytes, vscode.l10n.t),
          ),
          vscode.l10n.t('Open'),
          vscode.l10n.t('Reveal in Explorer'),
        )
        .then((choice) => {
          if (choice === vscode.l10n.t('Open'))
            void vscode.commands.executeCommand('vscode.open', vscode.Uri.file(result.path));
          else if (choice) void vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(result.path));
        });
      return result.path;
    } catch (err) {
      if (AbortError.is(err)) {
        void this.display.info(
          vscode.l10n.t(
            'Comfy Cloud: download of {0} canceled; the part received is kept, and the next download resumes it.',
            name,
          ),
        );
        return undefined;
      }
      if (NotFoundError.is(err)) {
        await this.assets.provider.forget(record).catch(() => undefined);
        void this.display.error(
          vscode.l10n.t(
            'Comfy Cloud: {0} is gone from the server (deleted or expired); it was removed from the list.',
            name,
          ),
        );
        return undefined;
      }
      this.log.warn('assets', `download of asset ${record.assetId} failed: ${errorMessage(err, vscode.l10n.t)}`);
      void this.display.error(
        vscode.l10n.t('Comfy Cloud: cannot download {0}: {1}', name, errorMessage(err, vscode.l10n.t)),
      );
      return undefined;
    }
  }

  /** Copies the asset's `core/ASSET` reference (the JSON a workflow input needs) to the clipboard; returns it. */
  async copyReference(arg?: AssetArg): Promise<string | undefined> {
    const record = this.recordOf(arg);
    if (!record) return undefined;
    const text = assetReferenceJson(record);
    await vscode.env.clipboard.writeText(text);
    void this.display.info(
      vscode.l10n.t(
        'Comfy Cloud: copied the core/ASSET reference of {0}: paste it as a workflow input.',
        this.nameOf(record),
      ),
    );
    return text;
  }

  /** Copies the asset id (neutralized: a control character must not reach a terminal through a paste); returns it. */
  async copyId(arg?: AssetArg): Promise<string | undefined> {
    const record = this.recordOf(arg);
    if (!record) return undefined;
    const id = this.display.text(record.assetId);
    await vscode.env.clipboard.writeText(id);
    void this.display.info(vscode.l10n.t('Comfy Cloud: asset id {0} copied.', id));
    return id;
  }

  /**
   * Deletes an asset on the server after a modal confirmation (skipped when `confirmed`), then takes it out of the
   * view. A 404 means it was already gone (taken out too). A 409 `asset_in_use` is explained: a job that has not
   * finished uses it; wait for that job or cancel it, then delete again.
   */
  async delete(arg?: AssetArg, confirmed = false): Promise<DeleteOutcome> {
    const record = this.recordOf(arg);
    if (!record) return 'kept';
    const name = this.nameOf(record);
    if (!confirmed) {
      const action = vscode.l10n.t('Delete');
      const choice = await vscode.window.showWarningMessage(
        vscode.l10n.t('Delete {0} from the server?', name),
        {
          modal: true,
          detail: vscode.l10n.t(
            'Workflows that reference it can no longer use it. A local copy of the file is not touched.',
          ),
        },
        action,
      );
      if (choice !== action) return 'kept';
    }
    try {
      await this.jobs.service.use((lease) => requireAssets(lease).assets.delete(record.assetId, lease.signal));
      this.log.info('assets', `asset ${record.assetId} deleted`);
      await this.assets.provider.forget(record);
      void this.display.info(vscode.l10n.t('Comfy Cloud: deleted {0} from the server.', name));
      return 'deleted';
    } catch (err) {
      if (NotFoundError.is(err)) {
        await this.assets.provider.forget(record).catch(() => undefined);
        void this.display.info(
          vscode.l10n.t('Comfy Cloud: {0} was already gone from the server; it was removed from the list.', name),
        );
        return 'gone';
      }
      if (AssetInUseError.is(err) || ApiError.hasCode(err, 'asset_in_use')) {
        const jobId = typeof err.details?.job_id === 'string' ? err.details.job_id : undefined;
        this.log.info('assets', `asset ${record.assetId} is in use${jobId ? ` by job ${jobId}` : ''}; not deleted`);
        const showJobs = vscode.l10n.t('Show Jobs');
        const message = jobId
          ? vscode.l10n.t(
              'Comfy Cloud: {0} was not deleted: job {1} has not finished and uses it. Wait for the job to end, or cancel it in the Jobs view, then delete again.',
              name,
              jobId.slice(0, 8),
            )
          : vscode.l10n.t(
              'Comfy Cloud: {0} was not deleted: a job that has not finished uses it. Wait for the job to end, or cancel it in the Jobs view, then delete again.',
              name,
            );
        void this.display.warning(message, showJobs).then((choice) => {
          if (choice === showJobs) void vscode.commands.executeCommand(`${Views.jobs}.focus`);
        });
        return 'in_use';
      }
      this.log.warn('assets', `delete of asset ${record.assetId} failed: ${errorMessage(err, vscode.l10n.t)}`);
      void this.display.error(
        vscode.l10n.t('Comfy Cloud: cannot delete {0}: {1}', name, errorMessage(err, vscode.l10n.t)),
      );
      return 'error';
    }
  }

  /** The record an argument names (a node, an id, an asset-like object), or the view's selection. */
  private recordOf(arg: AssetArg): AssetRecord | undefined {
    const provider = this.assets.provider;
    if (arg === undefined) return provider.recordOf(this.assets.view.selection[0]);
    if (typeof arg === 'string') return provider.recordOf(arg);
    if ('kind' in arg && arg.kind === 'asset') return provider.recordOf(arg);
    if ('assetId' in arg && typeof arg.assetId === 'string') {
      return (
        provider.recordOf(arg.assetId) ?? {
          baseUrl: provider.activeBaseUrl ?? '',
          assetId: arg.assetId,
          origin: 'output',
          hash: arg.hash,
          fileName: arg.fileName,
          recordedAt: new Date().toISOString(),
        }
      );
    }
    if ('id' in arg && typeof arg.id === 'string') {
      return (
        provider.recordOf(arg.id) ?? {
          baseUrl: provider.activeBaseUrl ?? '',
          assetId: arg.id,
          origin: 'output',
          hash: arg.hash,
          fileName: arg.name ?? undefined,
          recordedAt: new Date().toISOString(),
        }
      );
    }
    return undefined;
  }

  private nameOf(record: AssetRecord): string {
    return this.display.text(
      record.fileName?.split(/[\\/]/).pop() || vscode.l10n.t('asset {0}', record.assetId.slice(0, 8)),
    );
  }
}
