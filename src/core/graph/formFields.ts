/**
 * The fields of a node's form (core/graph/nodeForm.ts makes them from the workflow's text) and the check of a value
 * against its field. Types and one pure check, importing nothing: the graph webview flags a refused value on its field
 * with the same rules the host applies before it writes.
 */

/** Bounds on what a form carries (a combo of every model of a big server, a long prompt). */
export const FORM_LIMITS = { fields: 200, choices: 5_000, text: 200_000 } as const;

/** What a field edits: a number, text, a boolean, one of a combo's choices; `link` and `other` are shown, not edited. */
export type FormFieldKind = 'int' | 'float' | 'string' | 'boolean' | 'combo' | 'link' | 'other';

/** One field of a node's form. */
export interface FormField {
  /** The input's (or widget's) name; for a UI widget the definitions cannot name, `''`. */
  name: string;
  /** The words shown: the name, or `widget N` for an unnamed UI widget. */
  label: string;
  kind: FormFieldKind;
  /**
   * The value in the file (the definition's default when the file has none; null when neither); for an `other` field
   * whose value is a list or an object, its JSON text (bounded).
   */
  value: string | number | boolean | null;
  /** The JSON path of the value in the document (`["3","inputs","seed"]`, `["nodes",2,"widgets_values",0]`). */
  path: (string | number)[];
  min?: number;
  max?: number;
  step?: number;
  multiline?: boolean;
  /** A combo's choices (bounded by {@link FORM_LIMITS}); empty: any text is taken. */
  choices?: (string | number)[];
  /** A combo of files (an upload's input folder when the definitions were read): a name not among them is taken. */
  upload?: boolean;
  /** An integer seed: the form offers "randomize". */
  seed?: boolean;
  tooltip?: string;
  /** For a `link` field: the node and output it comes from. */
  link?: { from: string; output: number };
}

/** The form of one node. `definitions`: `known` (typed from the class), `unknownClass`, or `none` given. */
export interface NodeForm {
  nodeId: string;
  title: string;
  classType: string;
  format: 'api' | 'ui';
  definitions: 'known' | 'unknownClass' | 'none';
  fields: FormField[];
}

/** The words of the form's checks (templates with `{0}`, translated by the host). */
export interface FormWords {
  notInteger: string;
  notNumber: string;
  belowMin: string;
  aboveMax: string;
  notChoice: string;
  notBoolean: string;
  notText: string;
  tooLong: string;
  /** The form's own words. */
  inputs: string;
  close: string;
  randomize: string;
  linkedFrom: string;
  linked: string;
  inJson: string;
  noDefinitions: string;
  unknownClass: string;
}

/** The English words. */
export const FORM_WORDS: FormWords = {
  notInteger: 'expects an integer',
  notNumber: 'expects a number',
  belowMin: 'below the minimum {0}',
  aboveMax: 'above the maximum {0}',
  notChoice: 'not one of the choices',
  notBoolean: 'expects true or false',
  notText: 'expects text',
  tooLong: 'longer than {0} characters',
  inputs: 'Inputs',
  close: 'Close',
  randomize: 'Randomize',
  linkedFrom: 'linked from node {0}',
  linked: 'linked',
  inJson: 'edit this value in the JSON',
  noDefinitions: 'No node definitions: each value is typed by what the file holds (no ranges, no choices).',
  unknownClass: '{0} is not among the node definitions: each value is typed by what the file holds.',
};

/** `template` with `{0}`, `{1}` … replaced by `args`. */
export function formatWords(template: string, ...args: (string | number)[]): string {
  return template.replace(/\{(\d+)\}/g, (all, i: string) =>
    args[Number(i)] === undefined ? all : String(args[Number(i)]),
  );
}

/**
 * Why `value` cannot be the value of `field`, in `words`; undefined when it can. The rules of the workflow check on a
 * literal (Job and Asset API v2 and ComfyUI answer the same with a node error): an INT is an integer, numbers within
 * `min` and `max`, a combo's value one of its choices (any text when it has none, or for an upload), text bounded.
 */
export function fieldProblem(field: FormField, value: unknown, words: FormWords = FORM_WORDS): string | undefined {
  const range = (v: number): string | undefined =>
    field.min !== undefined && v < field.min
      ? formatWords(words.belowMin, field.min)
      : field.max !== undefined && v > field.max
        ? formatWords(words.aboveMax, field.max)
        : undefined;
  switch (field.kind) {
    case 'int':
      return typeof value === 'number' && Number.isSafeInteger(value) ? range(value) : words.notInteger;
    case 'float':
      return typeof value === 'number' && Number.isFinite(value) ? range(value) : words.notNumber;
    case 'boolean':
      return typeof value === 'boolean' ? undefined : words.notBoolean;
    case 'string':
      if (typeof value !== 'string') return words.notText;
      return value.length > FORM_LIMITS.text ? formatWords(words.tooLong, FORM_LIMITS.text) : undefined;
    case 'combo': {
      const choices = field.choices ?? [];
      if (typeof value !== 'string' && typeof value !== 'number') return words.notChoice;
      if (field.upload || choices.length === 0) return undefined;
      return choices.includes(value) ? undefined : words.notChoice;
    }
    default:
      return words.notText;
  }
}
