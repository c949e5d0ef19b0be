/**
 * Problems on nodes: workflow IntelliSense's diagnostics (core/workflowSchema `checkWorkflow`, each with its node id)
 * and a refused submission's node errors (a 422 `invalid_workflow`'s `details.node_errors`, Job and Asset API v2,
 * Errors) placed on the boxes of the graph.
 */
import { nodeErrorsOf, type WorkflowDiagnostic } from '../workflowSchema/validate';
import { shortText } from './model';
import type { GraphProblems, NodeProblem } from './types';

export type { GraphProblems, NodeProblem } from './types';

/** A node error as a refusal carries it (the v2 client's `InvalidWorkflowError.nodeErrors`). */
export interface NodeErrorLike {
  nodeId: string;
  field?: string;
  reason: string;
}

/** Bounds: problems kept per node and for the whole graph, characters of each message. */
export const PROBLEM_LIMITS = { perNode: 20, graph: 20, message: 300 } as const;

/**
 * The problems of `diagnostics` (through `nodeErrorsOf`, the shape of the server's `node_errors`) and of a refusal's
 * `nodeErrors`, by node id; each node keeps at most {@link PROBLEM_LIMITS}.perNode, each message at most
 * {@link PROBLEM_LIMITS}.message characters. The server's come first (they are why the job was refused); a server
 * problem that repeats a check's (same field and words) is kept once. `clean` makes the server's words safe to show.
 */
export function problemsOnNodes(
  diagnostics: readonly WorkflowDiagnostic[],
  nodeErrors: readonly NodeErrorLike[] = [],
  clean: (text: string) => string = (t) => t,
): GraphProblems {
  const byNode: Record<string, NodeProblem[]> = {};
  const add = (nodeId: string, p: NodeProblem): void => {
    const list = (byNode[nodeId] ??= []);
    if (list.length >= PROBLEM_LIMITS.perNode || list.some((q) => q.field === p.field && q.message === p.message))
      return;
    list.push(p);
  };
  for (const e of nodeErrors)
    add(clean(e.nodeId), {
      field: clean(e.field ?? 'inputs'),
      message: shortText(clean(e.reason), PROBLEM_LIMITS.message),
      source: 'server',
    });
  const checked = nodeErrorsOf(diagnostics);
  for (const [nodeId, list] of Object.entries(checked.nodeErrors))
    for (const e of list)
      add(nodeId, { field: e.field, message: shortText(e.reason, PROBLEM_LIMITS.message), source: 'check' });
  return {
    byNode,
    graph: checked.graph.slice(0, PROBLEM_LIMITS.graph).map((m) => shortText(m, PROBLEM_LIMITS.message)),
  };
}
