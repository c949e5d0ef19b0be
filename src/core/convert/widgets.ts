/**
 * Which widgets ComfyUI's frontend gives a node of a class, and which saved value (`widgets_values`, by position) each
 * one holds. Rules, from the frontend's widget construction: one widget per input of a widget type (INT, FLOAT,
 * STRING, BOOLEAN, COMBO; not `forceInput`), in the definition's order, required inputs then optional ones; an INT
 * with `control_after_generate` (or named `seed` / `noise_seed` when the option is not given) is followed by its
 * control widget, a COMBO with the option by its control and filter widgets; an input with `image_upload` adds an
 * `upload` widget after the last required input; a v3 dynamic combo is followed by the widgets of its chosen option,
 * named `<input>.<name>`. Control, filter and upload widgets are saved but never sent in the API format. vscode-free.
 */
import type { InputDefinition, NodeClassDefinition } from '../workflowSchema/objectInfo';
import { isPlainObject } from '../util/workflow';

/** The control widget's values (`increment-wrap` only for combos). */
const CONTROL_MODES = new Set(['fixed', 'increment', 'decrement', 'randomize', 'increment-wrap']);

/** One widget of a node: its name and value, and whether the API format carries it. */
export interface Widget {
  readonly name: string;
  value: unknown;
  /** False for the control, filter and upload widgets (the frontend's `serialize: false`). */
  readonly sent: boolean;
  /** The input it edits (absent for control, filter and upload widgets). */
  readonly input?: InputDefinition;
  /** Its index in a saved `widgets_values` list; absent when the value is the default (past the list) or by name. */
  readonly position?: number;
}

/** Why a node's widgets cannot be laid out exactly: one sentence, with its fix. */
interface WidgetProblem {
  readonly reason: string;
  readonly fix: string;
}

const REEXPORT_FIX =
  "Open the workflow in ComfyUI with this engine's nodes and export it in API format (Export (API)), then run that file.";

/** True when the frontend makes a widget for `input` (a literal-valued input that is not link-only). */
export function isWidgetInput(input: InputDefinition): boolean {
  if (input.kind === 'link' || input.kind === 'dynamic') return false;
  // A comma-separated type is a socket unless the engine names its widget.
  if (input.type.includes(',')) return input.widgetType !== undefined;
  return true;
}

/** Whether the frontend follows this widget with a control widget (and, for a combo, a filter widget). */
function controlWidgets(input: InputDefinition): number {
  if (input.kind === 'combo') return input.controlAfterGenerate === true ? 2 : 0;
  if (input.kind === 'int')
    return (input.controlAfterGenerate ?? (input.name === 'seed' || input.name === 'noise_seed')) ? 1 : 0;
  if (input.kind === 'float') return input.controlAfterGenerate === true ? 1 : 0;
  return 0;
}

/** The frontend's value of a widget with no saved value: the definition's default, else a combo's first choice. */
function defaultValue(input: InputDefinition): { value: unknown } | undefined {
  if (input.default !== undefined) return { value: input.default };
  if (input.kind === 'combo' && input.choices && input.choices.length > 0) return { value: input.choices[0] };
  return undefined;
}

/** Whether a saved value can be the value of this widget; a value of another type means the positions are off. */
function fits(input: InputDefinition, value: unknown): boolean {
  switch (input.kind) {
    case 'int':
    case 'float':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    case 'string':
      return typeof value === 'string';
    case 'combo':
      return input.multiselect === true ? Array.isArray(value) : typeof value === 'string' || typeof value === 'number';
    default:
      return true;
  }
}

function describe(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

/**
 * The widgets of a node of class `definition` with its saved `widgetsValues`, in the frontend's order.
 * @returns the widgets, or the problem that keeps them from being placed exactly: a widget the converter does not
 * know (a UI-only or upload widget other than an image's), a value of the wrong type for its widget (the saved
 * positions do not line up with this definition), or a missing value with no default. Saved values past the last
 * widget are ignored, as the frontend ignores them.
 */
export function layoutWidgets(definition: NodeClassDefinition, widgetsValues: unknown): Widget[] | WidgetProblem {
  const list = Array.isArray(widgetsValues) ? widgetsValues : undefined;
  const byName = isPlainObject(widgetsValues) ? widgetsValues : undefined;
  const widgets: Widget[] = [];
  let position = 0;
  let problem: WidgetProblem | undefined;

  const saved = (): { value: unknown } | undefined =>
    list !== undefined && position < list.length ? { value: list[position] } : undefined;

  const addValue = (input: InputDefinition, name: string): void => {
    let found = byName !== undefined ? (Object.hasOwn(byName, name) ? { value: byName[name] } : undefined) : saved();
    const at = byName === undefined && found !== undefined ? position : undefined;
    if (byName === undefined) position++;
    if (found === undefined) found = defaultValue(input);
    if (found === undefined) {
      problem ??= {
        reason: `widget "${name}" has no saved value and its definition gives no default`,
        fix: REEXPORT_FIX,
      };
      return;
    }
    if (!fits(input, found.value)) {
      problem ??= {
        reason: `widget "${name}" (${input.type}) holds ${describe(found.value)}: the saved widget values do not line up with this engine's definition of the node`,
        fix: REEXPORT_FIX,
      };
      return;
    }
    widgets.push({ name, value: found.value, sent: true, input, ...(at === undefined ? {} : { position: at }) });
    const controls = controlWidgets(input);
    if (controls > 0 && byName === undefined) {
      // Recent frontends keep the control out of widgets_values: a control value is taken only when it is one
      // (a mode, or true / false from the first frontends, whose control was a "randomize" toggle).
      const control = saved();
      if (
        control !== undefined &&
        (typeof control.value === 'boolean' || (typeof control.value === 'string' && CONTROL_MODES.has(control.value)))
      ) {
        widgets.push({ name: 'control_after_generate', value: control.value, sent: false });
        position++;
        if (controls === 2 && saved() !== undefined) {
          widgets.push({ name: 'control_filter_list', value: saved()?.value, sent: false });
          position++;
        }
      }
    }
    if (input.dynamicOptions !== undefined) {
      const option = input.dynamicOptions.find((o) => o.key === found.value);
      if (option === undefined) {
        problem ??= {
          reason: `dynamic combo "${name}" holds ${describe(found.value)}, not one of its options`,
          fix: REEXPORT_FIX,
        };
        return;
      }
      for (const sub of option.inputs) addInput(sub, `${name}.${sub.name}`);
    }
  };

  const addInput = (input: InputDefinition, name: string): void => {
    if (input.socketless === true || (input.kind === 'dynamic' && input.type !== 'COMFY_AUTOGROW_V3')) {
      problem ??= {
        reason: `input "${name}" is a ${input.type} widget whose saved value the converter cannot place`,
        fix: REEXPORT_FIX,
      };
      return;
    }
    if (input.type === 'COMFY_AUTOGROW_V3') {
      // Autogrow slots are sockets (links, sent under their own names); slots with widgets are not placed.
      if ((input.template ?? []).some(isWidgetInput)) {
        problem ??= {
          reason: `autogrow input "${name}" has widgets whose saved values the converter cannot place`,
          fix: REEXPORT_FIX,
        };
      }
      return;
    }
    if (!isWidgetInput(input)) return;
    addValue(input, name);
  };

  const required = definition.inputs.filter((i) => i.required);
  const optional = definition.inputs.filter((i) => !i.required);
  for (const input of required) addInput(input, input.name);
  const upload = required.find((i) => i.uploadKind !== undefined) ?? optional.find((i) => i.uploadKind !== undefined);
  if (upload !== undefined) {
    if (upload.uploadKind !== 'image_upload' || !upload.required) {
      problem ??= {
        reason: `input "${upload.name}" has an upload widget (${upload.uploadKind ?? ''}) whose saved values the converter cannot place`,
        fix: REEXPORT_FIX,
      };
    } else if (byName === undefined) {
      // The frontend appends an `upload` button after the required inputs; its saved value is not sent.
      if (saved() !== undefined) widgets.push({ name: 'upload', value: saved()?.value, sent: false });
      position++;
    }
  }
  for (const input of optional) addInput(input, input.name);

  if (problem !== undefined) return problem;
  // Saved values past the last widget are dropped, as ComfyUI's frontend drops them: its LGraphNode.configure assigns
  // widgets_values to the node's widgets by position, and a value with no widget at its position goes nowhere, so the
  // prompt it queues never holds it (a SaveImage saved as ["ComfyUI", ""] is queued as filename_prefix "ComfyUI").
  return widgets;
}
