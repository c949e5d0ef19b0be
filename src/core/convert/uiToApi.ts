/**
 * UI format → API format: the graph ComfyUI's own frontend queues for a saved workflow (its `graphToPrompt`), or a
 * refusal naming every node that cannot be converted exactly. vscode-free.
 */
import { InputError } from '../http/errors';
import type { ApiWorkflow } from '../util/workflow';
import type { NodeDefinitions } from '../workflowSchema/objectInfo';

/** One node the converter cannot convert exactly: which node, and what to do about it. */
export interface ConversionProblem {
  /** The node's id as the API graph would name it (a subgraph's inner node: its path id, `"12:5"`). */
  readonly nodeId: string;
  /** The node's title when it has one of its own. */
  readonly title?: string;
  /** The node's type (`class_type`, or the frontend-only type such as `SetNode`). */
  readonly classType: string;
  /** Why it cannot be converted, one sentence. */
  readonly reason: string;
  /** What the user can do, one sentence. */
  readonly fix: string;
}

/**
 * The refusal of a conversion: every node that cannot be converted exactly (code `workflow_not_convertible`), or a
 * UI workflow whose shape is broken (code `ui_workflow_malformed`, no problems listed). The message is one line
 * per problem after a first line saying what happened.
 */
export class ConversionError extends InputError {
  constructor(
    code: 'workflow_not_convertible' | 'ui_workflow_malformed',
    message: string,
    readonly problems: readonly ConversionProblem[] = [],
  ) {
    super(code, message);
  }
}

/**
 * Converts a UI-format workflow (the editor's save file: schema 0.4 or version 1) into the API-format graph ComfyUI's
 * frontend would queue for it, given the engine's node definitions.
 * @param workflow the parsed UI workflow (a top-level `nodes` array).
 * @param definitions the engine's node definitions ({@link parseObjectInfo} of its `object_info`).
 * @returns the API graph, node id → `{ class_type, inputs, _meta: { title } }`.
 * @throws ConversionError when a node cannot be converted exactly, or the workflow's shape is broken.
 */
export function convertUiWorkflow(workflow: unknown, definitions: NodeDefinitions): ApiWorkflow {
  void workflow;
  void definitions;
  throw new ConversionError('workflow_not_convertible', 'UI-format conversion is not available yet');
}
