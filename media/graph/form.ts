/**
 * The node form beside the workflow graph: the chosen node's inputs as typed fields (@vscode-elements/elements), the
 * host's `form` message drawn, and each change checked on its field (core/graph/formFields.ts `fieldProblem`, the
 * rules the host applies again) before it is posted as an `edit`. A refused value is flagged on its field
 * (`invalid`, the reason under it, read by screen readers) and never posted. Text only: every string is set as text.
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-checkbox/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import '@vscode-elements/elements/dist/vscode-textarea/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import {
  FORM_WORDS,
  fieldProblem,
  formatWords,
  type FormField,
  type FormWords,
  type NodeForm,
} from '../../src/core/graph/formFields';

/** What the form reports: a checked change of a field, and the form closed. */
export interface FormCallbacks {
  edit(nodeId: string, field: string, value: string | number | boolean): void;
  close(): void;
}

/** A control of the form: the element, how to read its value, and how to set it. */
interface Control {
  field: FormField;
  element: HTMLElement & { invalid?: boolean };
  problem: HTMLElement;
  set(value: FormField['value']): void;
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K];
function el(tag: string, className?: string, text?: string): HTMLElement;
function el(tag: string, className?: string, text?: string): HTMLElement {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** The name an edit carries for a field: its name, or its label for an unnamed UI widget. */
function key(field: FormField): string {
  return field.name || field.label;
}

/** A random integer seed within the field's range (at most 2^53 − 1, what a JSON number holds exactly). */
function randomSeed(field: FormField): number {
  const min = Math.max(0, Math.ceil(field.min ?? 0));
  const max = Math.min(Number.MAX_SAFE_INTEGER, Math.floor(field.max ?? Number.MAX_SAFE_INTEGER));
  const [hi, lo] = crypto.getRandomValues(new Uint32Array(2));
  const r = ((hi! & 0x1fffff) * 0x1_0000_0000 + lo!) / 2 ** 53;
  return min + Math.floor(r * (max - min + 1));
}

/** The node form: {@link show} a node's form (null hides it), {@link refuse} a field with the host's words. */
export class NodeFormView {
  private form: NodeForm | null = null;
  private words: FormWords = FORM_WORDS;
  private controls = new Map<string, Control>();

  constructor(
    readonly root: HTMLElement,
    private readonly callbacks: FormCallbacks,
  ) {
    root.classList.add('graph-form');
    root.hidden = true;
    root.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') {
        e.stopPropagation();
        this.close();
      }
    });
  }

  /** The node whose form is shown, if any. */
  get nodeId(): string | null {
    return this.form?.nodeId ?? null;
  }

  /**
   * Shows `form` (null hides the form). The same node with the same fields keeps its controls (and what is being
   * typed in the focused one): only the other values change.
   */
  show(form: NodeForm | null, words: Partial<FormWords>, problem: { field: string; message: string } | null): void {
    this.words = { ...FORM_WORDS, ...words };
    const same =
      form !== null &&
      this.form?.nodeId === form.nodeId &&
      this.form.fields.length === form.fields.length &&
      this.form.fields.every((f, i) => key(f) === key(form.fields[i]!) && f.kind === form.fields[i]!.kind);
    this.form = form;
    if (!form) {
      this.root.hidden = true;
      this.root.replaceChildren();
      this.controls.clear();
      return;
    }
    if (same) {
      for (const field of form.fields) {
        const c = this.controls.get(key(field));
        if (!c) continue;
        c.field = field;
        if (!c.element.matches(':focus-within')) c.set(field.value);
        this.flagValue(c);
      }
    } else this.build(form);
    this.root.hidden = false;
    if (problem) {
      const c = this.controls.get(problem.field);
      if (c) this.flag(c, problem.message);
    }
  }

  /** Hides the form and tells the host. */
  close(): void {
    this.show(null, this.words, null);
    this.callbacks.close();
  }

  private build(form: NodeForm): void {
    this.controls.clear();
    const header = el('header', 'graph-form-header');
    const title = el('h2', 'graph-form-title', form.title);
    const close = el('vscode-button', 'graph-form-close', this.words.close);
    close.setAttribute('secondary', '');
    close.addEventListener('click', () => this.close());
    header.append(title, close);
    const parts: HTMLElement[] = [header];
    if (form.classType && form.classType !== form.title) parts.push(el('div', 'graph-form-class', form.classType));
    if (form.definitions !== 'known')
      parts.push(
        el(
          'p',
          'graph-form-note',
          form.definitions === 'none' ? this.words.noDefinitions : formatWords(this.words.unknownClass, form.classType),
        ),
      );
    const list = el('div', 'graph-form-fields');
    list.setAttribute('role', 'group');
    list.setAttribute('aria-label', `${this.words.inputs}: ${form.title}`);
    for (const field of form.fields) list.append(this.fieldRow(form.nodeId, field));
    parts.push(list);
    this.root.replaceChildren(...parts);
    this.root.setAttribute('aria-label', `${this.words.inputs}: ${form.title}`);
  }

  private fieldRow(nodeId: string, field: FormField): HTMLElement {
    const row = el('div', 'graph-form-field');
    row.dataset.field = key(field);
    const label = el('div', 'graph-form-label', field.label);
    const problem = el('div', 'graph-form-problem');
    problem.setAttribute('role', 'alert');
    const made = this.control(nodeId, field, problem);
    if (field.tooltip) label.title = field.tooltip;
    row.append(label, made.wrapper, problem);
    return row;
  }

  /** The control of one field, registered for updates; its wrapper holds it (and a seed's Randomize). */
  private control(nodeId: string, field: FormField, problem: HTMLElement): { wrapper: HTMLElement } {
    const wrapper = el('div', 'graph-form-control');
    const commit = (c: Control, value: string | number | boolean): void => {
      const why = fieldProblem(c.field, value, this.words);
      this.flag(c, why);
      if (why === undefined) this.callbacks.edit(nodeId, key(c.field), value);
    };
    const register = (element: Control['element'], set: Control['set']): Control => {
      element.setAttribute('aria-label', field.label);
      const c: Control = { field, element, problem, set };
      this.controls.set(key(field), c);
      set(field.value);
      wrapper.append(element);
      this.flagValue(c);
      return c;
    };
    switch (field.kind) {
      case 'int':
      case 'float': {
        const input = el('vscode-textfield') as HTMLElement & { value: string; type: string };
        input.type = 'number';
        if (field.min !== undefined) input.setAttribute('min', String(field.min));
        if (field.max !== undefined) input.setAttribute('max', String(field.max));
        input.setAttribute('step', String(field.step ?? (field.kind === 'int' ? 1 : 'any')));
        const c = register(input, (v) => (input.value = v === null ? '' : String(v)));
        input.addEventListener('change', () => commit(c, input.value.trim() === '' ? NaN : Number(input.value)));
        if (field.seed) {
          const randomize = el('vscode-button', 'graph-form-randomize', this.words.randomize);
          randomize.setAttribute('secondary', '');
          randomize.addEventListener('click', () => {
            const seed = randomSeed(c.field);
            c.set(seed);
            commit(c, seed);
          });
          wrapper.append(randomize);
        }
        break;
      }
      case 'boolean': {
        const box = el('vscode-checkbox') as HTMLElement & { checked: boolean };
        const c = register(box, (v) => (box.checked = v === true));
        box.addEventListener('change', () => commit(c, box.checked));
        break;
      }
      case 'combo': {
        const select = el('vscode-single-select') as HTMLElement & {
          value: string;
          combobox: boolean;
          options: { label: string; value: string; description: string; selected: boolean; disabled: boolean }[];
        };
        const choices = field.choices ?? [];
        // Many choices (a server's models): typed to filter.
        select.combobox = choices.length > 8;
        const set = (v: FormField['value']): void => {
          const shown = v === null ? '' : String(v);
          const values = choices.map(String);
          // A value not among the choices (a model not on this server) stays visible, and is flagged.
          if (shown !== '' && !values.includes(shown)) values.unshift(shown);
          select.options = values.map((value) => ({
            label: value,
            value,
            description: '',
            selected: value === shown,
            disabled: false,
          }));
          select.value = shown;
        };
        const c = register(select, set);
        select.addEventListener('change', () => {
          const picked = choices.find((x) => String(x) === select.value);
          commit(c, picked ?? select.value);
        });
        break;
      }
      case 'string': {
        const multiline = field.multiline === true || (typeof field.value === 'string' && field.value.includes('\n'));
        const input = el(multiline ? 'vscode-textarea' : 'vscode-textfield') as HTMLElement & { value: string };
        if (multiline) input.setAttribute('rows', '4');
        const c = register(input, (v) => (input.value = v === null ? '' : String(v)));
        input.addEventListener('change', () => commit(c, input.value));
        break;
      }
      case 'link': {
        const text = field.link?.from ? formatWords(this.words.linkedFrom, field.link.from) : this.words.linked;
        const span = el('span', 'graph-form-link', text);
        register(span, () => undefined);
        break;
      }
      default: {
        const span = el('span', 'graph-form-other', field.value === null ? '' : String(field.value));
        span.title = this.words.inJson;
        register(span, (v) => (span.textContent = v === null ? '' : String(v)));
      }
    }
    return { wrapper };
  }

  /** Flags the value the file holds when the field refuses it (a model not on this server, a value out of range). */
  private flagValue(c: Control): void {
    const editable = c.field.kind !== 'link' && c.field.kind !== 'other';
    this.flag(c, editable && c.field.value !== null ? fieldProblem(c.field, c.field.value, this.words) : undefined);
  }

  /** Flags `c` with `why` (undefined clears it): the control's `invalid` state and the words under it. */
  private flag(c: Control, why: string | undefined): void {
    if (c.element.tagName.startsWith('VSCODE-')) c.element.invalid = why !== undefined;
    c.problem.textContent = why ?? '';
    c.problem.hidden = why === undefined;
  }
}
