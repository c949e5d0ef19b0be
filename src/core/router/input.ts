/**
 * A model input as written in a file, made ready to send (CLI `models run` and the extension's Run Model):
 * a top-level `$schema` key removed, nothing else changed.
 */
import { parseTree } from 'jsonc-parser';

/**
 * Removes the top-level `$schema` property of a JSON object text, and only it, by an exact splice of the text (the
 * property's offsets from jsonc-parser's `parseTree`; nothing is re-serialised), so the rest keeps its bytes: big
 * integers, key order, escapes, spacing. The first property goes with the comma after it; any other with the comma
 * before it. A text without a top-level `$schema` (or not an object) is returned unchanged; a repeated top-level
 * `$schema` is removed every time.
 */
export function removeTopLevelSchemaKey(text: string): string {
  let out = text;
  // Bounded: each round removes one property.
  for (let round = 0; round < 1000; round++) {
    const root = parseTree(out);
    const props = root?.type === 'object' ? (root.children ?? []) : [];
    const index = props.findIndex((p) => p.children?.[0]?.value === '$schema');
    if (index < 0) return out;
    const prop = props[index];
    const end = prop.offset + prop.length;
    if (index > 0) {
      const prev = props[index - 1];
      out = out.slice(0, prev.offset + prev.length) + out.slice(end);
    } else if (props.length > 1) {
      const comma = out.indexOf(',', end);
      out = cutLine(out, prop.offset, comma >= 0 && comma < props[1].offset ? comma + 1 : end);
    } else {
      out = cutLine(out, prop.offset, end);
    }
  }
  return out;
}

/**
 * `text` without [from, to); when that span is all that stands on its line (an editor's `"$schema": "…",` line), the
 * whole line goes with it, so no blank line is left where the key was.
 */
function cutLine(text: string, from: number, to: number): string {
  const lineStart = text.lastIndexOf('\n', from - 1) + 1;
  const newline = text.indexOf('\n', to);
  const lineEnd = newline < 0 ? text.length : newline + 1;
  const alone =
    /^[ \t]*$/.test(text.slice(lineStart, from)) &&
    /^[ \t\r]*$/.test(text.slice(to, newline < 0 ? text.length : newline));
  return alone && newline >= 0 ? text.slice(0, lineStart) + text.slice(lineEnd) : text.slice(0, from) + text.slice(to);
}
