/**
 * Imports point one way: no module of src/ (nor of the webview scripts in media/) reaches itself again through its
 * imports. The graph is built with TypeScript's own parser (`ts.preProcessFile`), so it counts every edge a reader
 * follows: `import`, `import type`, `export ... from` (re-exports) and `import()`. A cycle closed only through
 * `import type` compiles, but still ties two layers together: the shared types belong below both.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { repositoryRoot } from './repositoryRoot';

const root = repositoryRoot();

/**
 * Folders whose cycles are reported elsewhere and not failed here (repository-relative, with a trailing slash): a
 * cycle all of whose modules lie in one of these folders is skipped. Each entry is a cycle still to break in a part
 * of the code being reworked in parallel; empty this list as those are broken.
 */
const ALLOWED_CYCLE_FOLDERS: readonly string[] = [];

/** Every `.ts` file under `dir`, as absolute paths. */
function sources(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

/** The file a relative import specifier names from `from`, or undefined for a package or a file outside the graph. */
function resolve(from: string, specifier: string, files: ReadonlySet<string>): string | undefined {
  if (!specifier.startsWith('.')) {
    return undefined;
  }
  const base = path.resolve(path.dirname(from), specifier).replace(/\.js$/, '');
  return [`${base}.ts`, path.join(base, 'index.ts')].find((f) => files.has(f));
}

/** The import graph: each file to the files it imports (every kind of edge), in a stable order. */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const info = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
    const targets = info.importedFiles
      .map((f) => resolve(file, f.fileName, known))
      .filter((f): f is string => f !== undefined);
    graph.set(file, [...new Set(targets)].sort());
  }
  return graph;
}

/** The strongly connected components of more than one file (or a file importing itself): each holds a cycle. */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  // Tarjan's algorithm, iterative so that a deep chain of imports cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const found: string[][] = [];
  let next = 0;
  for (const start of graph.keys()) {
    if (index.has(start)) {
      continue;
    }
    const work: Array<{ node: string; edge: number }> = [{ node: start, edge: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const edges = graph.get(frame.node) ?? [];
      if (frame.edge < edges.length) {
        const to = edges[frame.edge++]!;
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, edge: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]!.node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        if (component.length > 1 || (graph.get(frame.node) ?? []).includes(frame.node)) {
          found.push(component.sort());
        }
      }
    }
  }
  return found;
}

/** One shortest cycle through `start` inside `component`, as a path `a → b → … → a` of repository-relative names. */
function cyclePath(graph: ReadonlyMap<string, readonly string[]>, component: readonly string[]): string {
  const members = new Set(component);
  const start = component[0]!;
  const previous = new Map<string, string>();
  const queue = [start];
  let last: string | undefined;
  while (queue.length > 0 && last === undefined) {
    const node = queue.shift()!;
    for (const to of graph.get(node) ?? []) {
      if (!members.has(to)) {
        continue;
      }
      if (to === start) {
        last = node;
        break;
      }
      if (!previous.has(to)) {
        previous.set(to, node);
        queue.push(to);
      }
    }
  }
  const chain = [start];
  for (let node = last; node !== undefined && node !== start; node = previous.get(node)) {
    chain.splice(1, 0, node);
  }
  chain.push(start);
  return chain.map((f) => path.relative(root, f).split(path.sep).join('/')).join(' → ');
}

describe('import cycles (src/ and media/, every kind of import)', () => {
  it('the graph sees import type, re-exports and import() as edges', () => {
    const info = ts.preProcessFile(
      "import type { A } from './a';\nexport { B } from './b';\nexport * from './c';\nconst d = import('./d');\n",
      true,
      true,
    );
    assert.deepEqual(info.importedFiles.map((f) => f.fileName).sort(), ['./a', './b', './c', './d']);
  });

  it('no module imports itself again through its imports', () => {
    const files = [...sources(path.join(root, 'src')), ...sources(path.join(root, 'media'))];
    const graph = importGraph(files);
    const relative = (f: string): string => path.relative(root, f).split(path.sep).join('/');
    const failing = cycles(graph)
      .filter(
        (component) => !component.every((f) => ALLOWED_CYCLE_FOLDERS.some((folder) => relative(f).startsWith(folder))),
      )
      .map(
        (component) =>
          `${cyclePath(graph, component)}   (${component.length} modules in the circle: ${component.map(relative).join(', ')})`,
      );
    assert.deepEqual(failing, [], `import cycles found:\n${failing.join('\n')}`);
  });
});
