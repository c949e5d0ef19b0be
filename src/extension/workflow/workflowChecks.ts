/**
 * The vscode-free parts of workflow IntelliSense in the editor (and of the same validation before submit): which
 * documents it applies to, where a diagnostic goes in the text, where the
 * `$schema` member is inserted, and the check before submit in the server's words. Positions come from jsonc-parser
 * (as VS Code's JSON extension does), never from a regex.
 */
import { findNodeAtLocation, parse, parseTree, type Node } from 'jsonc-parser';
import { InvalidWorkflowError } from '../../core';
import { detectWorkflowFormat, isPlainObject, type TextSpan, type Translate } from '../../core/util';
import {
  checkWorkflow,
  nodeErrorsOf,
  summarizeWorkflowProblems,
  type NodeDefinitions,
  type WorkflowDiagnostic,
} from '../../core/workflowSchema';

/** The URI of the workflow schema, as a `$schema` value and in `jsonValidation` (package.json). */
export const WORKFLOW_SCHEMA_URI = 'comfy-workflow-schema://schemas/api-format.json';

/** The file names the `jsonValidation` contribution applies the schema to (package.json `fileMatch`): `*.api.json`. */
export function isApiJsonName(fileName: string): boolean {
  return /\.api\.json$/i.test(fileName);
}

const PARSE_OPTIONS = { allowTrailingComma: true, disallowComments: false };

/** `text` parsed tolerantly (comments, trailing commas, a half-typed document as far as it goes). */
export function parseJsonText(text: string): unknown {
  return parse(text, [], PARSE_OPTIONS) as unknown;
}

/** The top-level `$schema` string of a parsed document, if any. */
export function schemaOf(value: unknown): string | undefined {
  return isPlainObject(value) && typeof value.$schema === 'string' ? value.$schema : undefined;
}

/**
 * Whether the diagnostics beyond the schema apply to a document: an API-format workflow (core
 * `detectWorkflowFormat`, which ignores `$schema`) that uses the workflow schema, by its name (`*.api.json`) or by
 * its `$schema` ({@link WORKFLOW_SCHEMA_URI}). Any other JSON is left alone (never a schema for all JSON: it would
 * break other extensions' schemas).
 */
export function usesWorkflowSchema(fileName: string, value: unknown): boolean {
  if (!isApiJsonName(fileName) && schemaOf(value) !== WORKFLOW_SCHEMA_URI) return false;
  return detectWorkflowFormat(value) === 'api';
}

/**
 * Where the "Add the workflow schema ($schema)" code action inserts, and what: before the first member of the
 * top-level object, `"$schema": "<uri>",` then a line break and that member's indentation. Undefined when the
 * document is not an API-format workflow, or already has a top-level `$schema` (offered only for files
 * that look like API format).
 */
export function schemaInsertion(text: string): { offset: number; text: string } | undefined {
  const root = parseTree(text, [], PARSE_OPTIONS);
  if (root?.type !== 'object') return undefined;
  const value = parseJsonText(text);
  if (schemaOf(value) !== undefined || detectWorkflowFormat(value) !== 'api') return undefined;
  const first = root.children?.[0];
  if (!first) return undefined;
  const lineStart = text.lastIndexOf('\n', first.offset - 1) + 1;
  const before = text.slice(lineStart, first.offset);
  // The first member on a line of its own: the same indentation for the next line; else (all on one line) a space.
  const separator = /^[ \t]*$/.test(before) ? `\n${before}` : ' ';
  return { offset: first.offset, text: `"$schema": ${JSON.stringify(WORKFLOW_SCHEMA_URI)},${separator}` };
}

/**
 * The span of each diagnostic in `text`: the JSON node at its `path` (for a key of an object, the property's key is
 * used when the path ends at a missing member: the nearest node that exists, going up the path); the whole
 * workflow (`[]`) is its first character, so a graph-level problem does not underline the whole file.
 */
export function diagnosticSpans(text: string, diagnostics: readonly WorkflowDiagnostic[]): TextSpan[] {
  const root = parseTree(text, [], PARSE_OPTIONS);
  const start: TextSpan = { offset: root?.offset ?? 0, length: root ? 1 : 0 };
  return diagnostics.map(({ path }) => {
    if (!root) return start;
    for (let n = path.length; n > 0; n--) {
      const node = findNodeAtLocation(root, path.slice(0, n));
      if (!node) continue;
      // A node's whole object would underline many lines: its key says which node it is.
      const target: Node =
        node.type === 'object' && node.parent?.type === 'property' ? node.parent.children![0]! : node;
      return { offset: target.offset, length: target.length };
    }
    return start;
  });
}

/** What {@link problemsBeforeSubmit} found: the error to show in Problems (as a 422 would be) and the one-line message. */
export interface RefusedBeforeSubmit {
  /** The problems as the server's `invalid_workflow` error (node errors; graph-level ones under the node id ''). */
  readonly error: InvalidWorkflowError;
  /** The server's words (core `summarizeWorkflowProblems`): `invalid workflow: node 2 input image: …`. */
  readonly message: string;
}

/**
 * The check before submit (the same validation runs before submit, v1 and v2, with the words the server
 * would use): every rule of core `checkWorkflow` (`scope: 'all'`) against `definitions`. Undefined (submit) when
 * the definitions are unknown or the workflow has no problem; else the refusal, and nothing may be sent.
 */
export function problemsBeforeSubmit(
  workflow: unknown,
  definitions: NodeDefinitions | undefined,
  t: Translate,
  options: { readonly emulator?: boolean } = {},
): RefusedBeforeSubmit | undefined {
  const check = checkWorkflow(workflow, definitions, t, { scope: 'all' });
  if (check.status !== 'checked' || check.diagnostics.length === 0) return undefined;
  const unknown = unknownClassesOf(workflow, check.diagnostics);
  const classes = unknown?.join(', ') ?? '';
  // Only classes the server does not run: one sentence naming each once, as the emulator's own refusal says it.
  const message =
    unknown === undefined
      ? summarizeWorkflowProblems(check.diagnostics, t)!
      : options.emulator
        ? t(
            'the local emulator runs only its demo nodes ({0}), not {1}; use a cloud connection for this workflow',
            [...definitions!.classes.keys()].join(', '),
            classes,
          )
        : t(
            'the server does not run the node classes {0} that this workflow uses; use a connection that runs them',
            classes,
          );
  const { nodeErrors, graph } = nodeErrorsOf(check.diagnostics);
  const details: Record<string, { field?: string; reason: string }[]> = { ...nodeErrors };
  if (graph.length > 0) details[''] = graph.map((reason) => ({ reason }));
  const error = new InvalidWorkflowError({
    status: 422,
    code: 'invalid_workflow',
    message,
    details: { node_errors: details, ...(unknown ? { unknown_classes: unknown } : {}) },
  });
  return { error, message };
}

/** The classes of the nodes of `workflow` whose class the definitions lack, each once, when that is every problem. */
function unknownClassesOf(workflow: unknown, diagnostics: readonly WorkflowDiagnostic[]): string[] | undefined {
  if (!isPlainObject(workflow) || diagnostics.some((d) => d.code !== 'missing_node_type' || d.nodeId === undefined))
    return undefined;
  const classes = diagnostics.map((d) => {
    const node = workflow[d.nodeId!];
    return isPlainObject(node) && typeof node.class_type === 'string' ? node.class_type : undefined;
  });
  return classes.every((c) => c !== undefined) ? [...new Set(classes as string[])] : undefined;
}
