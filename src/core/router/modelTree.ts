/**
 * The Models view's content, vscode-free (the router catalog shown as providers with their
 * models, filtered by text, the billing note in the tooltip). Every server string is cleaned (`clean`, default
 * {@link neutralize}) and, in the Markdown tooltip, Markdown-escaped (server data is untrusted), as jobTree.ts does.
 */
import { untranslated, type Translate } from '../util/l10n';
import { billingOf, type ModelEntry } from './schemas';
import { escapeMarkdown, neutralize } from '../util/text';

/** A provider and its models, both in the order the catalog served them (the order served is kept, not sorted). */
export interface ModelGroup {
  provider: string;
  models: ModelEntry[];
}

/** One tree item's words: label, description, Markdown tooltip. */
interface ModelItemModel {
  label: string;
  description: string;
  tooltip: string;
}

/**
 * Whether `entry` matches the filter text: a case-insensitive substring of its id (`provider/model[/variant]`);
 * an empty or blank filter matches everything.
 */
export function matchesModelFilter(entry: Pick<ModelEntry, 'id'>, filter: string): boolean {
  const needle = filter.trim().toLowerCase();
  return needle === '' || entry.id.toLowerCase().includes(needle);
}

/**
 * Groups catalog entries by provider: providers in the order of their first entry, models in the order served, an
 * id seen twice (a cursor repeating an entry) kept once, entries not matching `filter` left out, and a provider with
 * no entry left dropped.
 */
export function groupModels(entries: Iterable<ModelEntry>, filter = ''): ModelGroup[] {
  const groups = new Map<string, ModelGroup>();
  const seen = new Set<string>();
  for (const entry of entries) {
    if (seen.has(entry.id)) continue;
    seen.add(entry.id);
    if (!matchesModelFilter(entry, filter)) continue;
    let group = groups.get(entry.provider);
    if (!group) groups.set(entry.provider, (group = { provider: entry.provider, models: [] }));
    group.models.push(entry);
  }
  return [...groups.values()];
}

/** The view's description: "filtered: x" while a filter is set, else empty. */
export function modelFilterDescription(
  filter: string,
  t: Translate = untranslated,
  clean: (text: string) => string = (s) => neutralize(s),
): string {
  return filter.trim() === '' ? '' : t('filtered: {0}', clean(filter.trim()));
}

/** A provider's item: its name, the number of its (shown) models. */
export function presentProvider(
  group: ModelGroup,
  t: Translate = untranslated,
  clean: (text: string) => string = (s) => neutralize(s),
): ModelItemModel {
  const name = clean(group.provider);
  const count = group.models.length === 1 ? t('1 model') : t('{0} models', group.models.length);
  return { label: name, description: count, tooltip: `**${escapeMarkdown(name)}**\n\n${escapeMarkdown(count)}` };
}

/**
 * A model's item: the model segment as label (the variant, when the id has a third segment, as description), the
 * whole id and the billing note (`charges_on_policy_rejection`, not shown in Model router API; public sources: `yes`,
 * `no` or `unknown`, anything else `unknown`) in the tooltip.
 */
export function presentModel(
  entry: ModelEntry,
  t: Translate = untranslated,
  clean: (text: string) => string = (s) => neutralize(s),
): ModelItemModel {
  const note = billingOf(entry);
  const billing = note === 'yes' ? t('yes') : note === 'no' ? t('no') : t('unknown');
  const segments = entry.id.split('/');
  const variant = segments.length > 2 ? clean(segments.slice(2).join('/')) : '';
  const lines = [
    `**${escapeMarkdown(clean(entry.id))}**`,
    escapeMarkdown(t('Charged when the provider rejects the content: {0}', billing)),
  ];
  return { label: clean(entry.model), description: variant, tooltip: lines.join('\n\n') };
}
