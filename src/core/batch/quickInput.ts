/**
 * The variations of one node input as an editor's quick input gives them ("Run with Variations…"): a range, a list,
 * a file of values or a folder of files, each turned into the batch model's values with the same rules as a
 * `--set NODE.FIELD=SPEC` option (variations.ts), so the editor and the CLI make the same batch of the same input.
 */
import * as path from 'node:path';
import { InputError } from '../http/errors';
import type { ApiWorkflow } from '../util/workflow';
import {
  checkSources,
  combine,
  expandSpec,
  fitSources,
  parseLiteral,
  parseRange,
  type Literal,
  type ValueSource,
  type Variation,
} from './variations';

/** How the values were given: `range` (`1..8`, `1..20:5`), `list` (comma or line separated), `file` (one value a line), `folder` (each file uploaded). */
export type QuickValueKind = 'range' | 'list' | 'file' | 'folder';

/**
 * The literals of a list: one a line when the text has a line break, else comma separated; each trimmed, blanks
 * skipped, each read as a `--set` literal (a number, boolean or null when it parses as one in JSON, else the text).
 */
export function listValues(text: string): Literal[] {
  const parts = /\r?\n/.test(text) ? text.split(/\r?\n/) : text.split(',');
  return parts
    .map((p) => p.trim())
    .filter((p) => p !== '')
    .map(parseLiteral);
}

/**
 * Why a range's text is not usable (for the input box's live check), or undefined when it is one with values.
 */
export function rangeProblem(text: string): string | undefined {
  try {
    return parseRange(text.trim()) ? undefined : `"${text.trim()}" is not a range such as 1..8 or 1..20:5`;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * The variations of node input `nodeId`.`field` of `workflow` from a quick input's `text` of kind `kind` (`file`
 * and `folder`: a path, absolute or relative to `baseDir`), one per value, indexed from 0; checked against the
 * workflow before anything is recorded.
 * @throws InputError `bad_range` / `empty_values` (a range with no values, an empty list, file or folder),
 *   `no_such_node`, `input_is_link`, `not_a_folder`, `unreadable`, `too_many_variations`, and readInputFile's errors.
 */
export async function variationsFromQuickInput(
  workflow: ApiWorkflow,
  nodeId: string,
  field: string,
  kind: QuickValueKind,
  text: string,
  baseDir: string,
): Promise<Variation[]> {
  // The input first: a bad node or a link is said before any file is read.
  checkSources(workflow, [{ nodeId, field, values: [{ kind: 'literal', value: null }] }]);
  let values: ValueSource['values'];
  if (kind === 'range') {
    const range = parseRange(text.trim());
    if (!range) throw new InputError('bad_range', `"${text.trim()}" is not a range such as 1..8 or 1..20:5`);
    values = range.map((value) => ({ kind: 'literal', value }));
  } else if (kind === 'list') {
    values = listValues(text).map((value) => ({ kind: 'literal', value }));
    if (values.length === 0) throw new InputError('empty_values', 'the list has no values');
  } else {
    const target = path.resolve(baseDir, text);
    values = await expandSpec(`@${target}${kind === 'folder' ? path.sep : ''}`, baseDir);
  }
  return combine(fitSources(workflow, [{ nodeId, field, values }]), 'grid');
}
