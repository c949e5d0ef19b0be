/**
 * The Assets view's model, without `vscode`: every word of an item (label,
 * description, icon, flag-style `contextValue`, Markdown tooltip, accessible label), its stable id, and the
 * `core/ASSET` reference a workflow needs, so all of it is tested with plain mocha. The extension's tree provider
 * (src/extension/assetsView.ts) only turns these into `TreeItem`s.
 *
 * Every server-chosen string (asset id, file name, hash, content type, job id, times) passes through the injected
 * `clean` (the extension's redactor: secrets redacted, control and bidi characters escaped: server data is
 * untrusted), and in the Markdown tooltip is also Markdown-escaped, so a server cannot inject links, images or
 * emphasis. Words are ours, through the injected {@link Translate}.
 */
import type { Translate } from '../util/l10n';
import { escapeMarkdown, neutralize } from '../util/text';
import { humanSize } from '../util/bytes';
import { assetReference, isPngOutput } from '../util/workflow';
import type { AssetRecord } from '../state/assetRecords';

/** What the presentation needs from outside. */
export interface AssetPresentOptions {
  /** Our words in the user's language (`vscode.l10n.t`; `untranslated` in tests). */
  t: Translate;
  /** Makes a server string safe to show on one line (the extension's redactor). Default {@link neutralize}. */
  clean?: (text: string) => string;
}

/** A codicon id and the theme color it is drawn in (undefined: the default foreground). */
interface AssetIcon {
  id: string;
  color?: string;
}

/** How an asset's item looks. */
export interface AssetItemModel {
  /** Stable id ({@link assetKey}): selection survives refreshes. */
  id: string;
  label: string;
  description: string;
  icon: AssetIcon;
  /** Flags: `asset:<upload|output>[:dedup][:hash][:local]`; package.json menus match them by regex. */
  contextValue: string;
  /** Markdown, every server string escaped. */
  tooltip: string;
  /** What a screen reader says for the item. */
  accessibilityLabel: string;
}

/** The stable id of an asset's item: its server's base URL and its id. */
export function assetKey(record: Pick<AssetRecord, 'baseUrl' | 'assetId'>): string {
  return `${record.baseUrl} asset:${record.assetId}`;
}

/** The first 12 hex digits of a `blake3:<hex>` hash (what the description shows); '' for none. */
export function shortHash(hash: string | null | undefined): string {
  if (!hash) return '';
  const hex = hash.startsWith('blake3:') ? hash.slice('blake3:'.length) : hash;
  return hex.slice(0, 12);
}

/** The name an asset shows: its file name, else `asset <first 8 characters of its id>`. Cleaned. */
function assetName(record: Pick<AssetRecord, 'fileName' | 'assetId'>, options: AssetPresentOptions): string {
  const clean = options.clean ?? ((t: string) => neutralize(t));
  const base = record.fileName?.split(/[\\/]/).filter(Boolean).pop();
  return base ? clean(base) : options.t('asset {0}', clean(record.assetId.slice(0, 8)));
}

/**
 * The description: for a dedup hit "already there: no bytes sent" (a dedup hit is shown as such), then size,
 * type and short hash.
 */
function describeAsset(record: AssetRecord, options: AssetPresentOptions): string {
  const clean = options.clean ?? ((t: string) => neutralize(t));
  // The dedup hit first: a narrow sidebar cuts the end of a description.
  const parts = [
    record.dedup ? options.t('already there: no bytes sent') : '',
    // Outputs of different jobs often share a name (invert_00001_.png): the job's short id tells them apart.
    record.origin === 'output' && record.jobId ? options.t('job {0}', clean(record.jobId.slice(0, 8))) : '',
    humanSize(record.sizeBytes, options.t),
    record.contentType ? clean(record.contentType) : '',
    clean(shortHash(record.hash)),
  ];
  return parts.filter(Boolean).join(' · ');
}

/** The icon: a cloud with a check for a dedup hit, an upload arrow for bytes sent, a media or file icon for an output. */
function assetIcon(record: AssetRecord): AssetIcon {
  if (record.origin === 'output') return { id: /^image\//.test(record.contentType ?? '') ? 'file-media' : 'file' };
  return record.dedup ? { id: 'cloud', color: 'testing.iconPassed' } : { id: 'cloud-upload' };
}

/** The presentation of one remembered asset (see {@link AssetItemModel}). */
export function presentAsset(record: AssetRecord, options: AssetPresentOptions): AssetItemModel {
  const { t } = options;
  const clean = options.clean ?? ((s: string) => neutralize(s));
  const md = (text: string): string => escapeMarkdown(clean(text));
  const code = (text: string): string => `\`${clean(text).replace(/`/g, "'")}\``;
  const name = assetName(record, options);
  const flags = [`asset:${record.origin === 'output' ? 'output' : 'upload'}`];
  if (record.dedup) flags.push('dedup');
  if (record.hash) flags.push('hash');
  if (record.localPath) flags.push('local');
  // A PNG may carry its workflow (Open Workflow from Image, Run Again from Image).
  if (isPngOutput(record.contentType, record.fileName)) flags.push('png');

  const lines: string[] = [`**${escapeMarkdown(name)}**`, ''];
  const row = (label: string, value: string): void => void lines.push(`- ${label}: ${value}`);
  row(t('Asset id'), code(record.assetId));
  row(t('Hash'), record.hash ? code(record.hash) : t('not yet'));
  const size = humanSize(record.sizeBytes, t);
  row(t('Size'), size ? `${size} (${t('{0} bytes', record.sizeBytes!)})` : t('not yet'));
  row(t('Type'), record.contentType ? md(record.contentType) : t('not given'));
  if (record.origin === 'output') row(t('Output of job'), record.jobId ? code(record.jobId) : t('unknown'));
  else row(t('Upload'), record.dedup ? t('already there: no bytes sent') : t('bytes sent'));
  if (record.localPath) row(record.origin === 'output' ? t('Saved at') : t('From'), md(record.localPath));
  if (record.createdAt) row(t('Created'), md(record.createdAt));
  if (record.expiresAt) row(t('Expires'), md(record.expiresAt));
  row(t('Recorded'), md(record.recordedAt));
  if (record.client) row(t('Recorded by'), md(record.client));
  row(t('Server'), md(record.baseUrl));

  const description = describeAsset(record, options);
  return {
    id: assetKey(record),
    label: name,
    description,
    icon: assetIcon(record),
    contextValue: flags.join(':'),
    tooltip: lines.join('\n'),
    accessibilityLabel: [name, record.origin === 'output' ? t('output') : t('uploaded asset'), description]
      .filter(Boolean)
      .join(', '),
  };
}

/** The items of the view, in the records' order (the store lists newest first). */
export function buildAssetTree(records: Iterable<AssetRecord>, options: AssetPresentOptions): AssetItemModel[] {
  return [...records].map((r) => presentAsset(r, options));
}

// Characters a JSON string may hold raw but that must not reach a paste unseen: C0/C1 controls, bidi controls,
// invisible format characters and lone surrogates (text.ts's list). JSON.stringify escapes only U+0000–U+001F.
const INVISIBLE =
  /[\u007f-\u009f\u061c\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff]/g;

/**
 * The `core/ASSET` reference of an asset as JSON text, ready to paste into a workflow input (Job and Asset API v2,
 * POST /api/v2/jobs, rule 1; its shape is not shown there, public sources give it:
 * `{"__type": "core/ASSET", "info": {"id", "hash", "file_path"}}`; `info.id` is what counts). Exactly the values
 * the server gave: bidi, invisible and control characters are written as `\uXXXX` escapes, which JSON reads back
 * as the same string, so nothing hidden is pasted and nothing is changed.
 */
export function assetReferenceJson(record: Pick<AssetRecord, 'assetId' | 'hash' | 'fileName'>): string {
  const reference = assetReference({
    id: record.assetId,
    hash: record.hash ?? null,
    file_path: record.fileName ?? null,
  });
  return JSON.stringify(reference).replace(INVISIBLE, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
