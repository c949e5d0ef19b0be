/**
 * Where a 422's field errors are in the input file (Run Model: a 422 becomes Problems entries at each
 * `loc` path in the file, found with jsonc-parser). vscode-free.
 */
import { findNodeAtLocation, parseTree } from 'jsonc-parser';
import type { RouterFieldError } from './errors';

/** A field error placed in the text: `offset`, `length` (UTF-16 code units) and the error. */
interface FieldErrorSpan {
  offset: number;
  length: number;
  /** True when the span is the field's value itself; false when it is the nearest enclosing node found. */
  exact: boolean;
  error: RouterFieldError;
}

/**
 * The span of each field error's `loc` (outermost first, integers index arrays; Model router API, Errors) in
 * the input `text`: the value's node found with jsonc-parser's `findNodeAtLocation`; a leading `body` (the
 * FastAPI convention) is skipped when the input has no `body` field; a path not in the file (a missing required
 * field) falls back to its deepest existing parent, then to the whole top-level object.
 */
export function fieldErrorSpans(text: string, errors: readonly RouterFieldError[]): FieldErrorSpan[] {
  const root = parseTree(text);
  return errors.map((error) => {
    let loc = error.loc;
    if (root && loc[0] === 'body' && !findNodeAtLocation(root, ['body'])) loc = loc.slice(1);
    for (let n = loc.length; root && n >= 0; n--) {
      const node = findNodeAtLocation(root, loc.slice(0, n));
      if (node) {
        // A property's key is where a missing child belongs: point at the key of the parent's property, or the value.
        const target = n < loc.length && node.parent?.type === 'property' ? node.parent.children![0]! : node;
        return { offset: target.offset, length: target.length, exact: n === loc.length, error };
      }
    }
    return { offset: 0, length: Math.min(text.length, 1), exact: false, error };
  });
}
