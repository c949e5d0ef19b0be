/**
 * One node of the graph drawn and painted: its box, title and lines drawn once; its state, problems, selection,
 * outputs and preview painted on later messages by changing classes and a few attributes (fluid at 500 nodes).
 * States and problems are told by a symbol and the border's style too, never by colour alone.
 */
import type { GraphProblems, NodeRunState } from '../../src/core/graph/types';
import { clampFraction } from '../../src/core/jobs/progress';
import { svg } from './dom';
import { LINE, nodeRows, rowMiddle, SOCKET_INSET, TITLE_HEIGHT, type Placed, type Socket } from './layout';
import type { GraphWords } from './words';

const STATUS_MARK: Record<NodeRunState['status'], string> = {
  waiting: '…',
  running: '▶',
  done: '✓',
  cached: '↺',
  failed: '✗',
};

/** The drawn parts of one node that later messages update. */
export interface NodeView {
  placed: Placed;
  g: SVGGElement;
  box: SVGRectElement;
  mark: SVGTextElement;
  /** Made at the first state, problem or output that needs them (most nodes of a big graph never do). */
  bar?: SVGRectElement;
  problem?: SVGGElement;
  extra?: SVGGElement;
}

/** What a node is painted from: the run's states, the problems, the selected node and the words of its label. */
export interface NodePaint {
  states: Record<string, NodeRunState>;
  problems: GraphProblems;
  selected: string | null;
  words: GraphWords;
}

/** Draws one placed node (box, title, lines, status mark) and paints it from `ctx`. */
export function drawNode(p: Placed, ctx: NodePaint): NodeView {
  const n = p.node;
  const g = svg(
    'g',
    { transform: `translate(${p.x},${p.y})`, tabindex: -1, role: 'button', 'data-id': n.id },
    `graph-node kind-${n.kind} mode-${n.mode}${n.unknownClass ? ' unknown' : ''}`,
  );
  const box = svg('rect', { width: p.width, height: p.height, rx: 4 }, 'graph-node-box');
  g.append(box);
  if (n.kind !== 'note')
    g.append(svg('line', { x1: 0, y1: TITLE_HEIGHT, x2: p.width, y2: TITLE_HEIGHT }, 'graph-node-rule'));
  const title = svg('text', { x: 8, y: 20 }, 'graph-node-title');
  const chars = Math.max(6, Math.floor((p.width - 40) / 8));
  const prefix = n.kind === 'subgraph' ? '▣ ' : '';
  title.textContent = prefix + (n.title.length > chars ? `${n.title.slice(0, chars - 1)}…` : n.title);
  g.append(title);
  const rows = nodeRows(n, p.sockets, p.width);
  // A row below a saved (UI-format) box's bottom is not drawn: the box is the size the file gave it.
  const fits = (row: number) => row === 0 || rowMiddle(row) + 4 <= p.height;
  const lines = svg('text', {}, 'graph-node-lines');
  rows.lines.forEach((l, i) => {
    if (!l.text || !fits(i)) return;
    const span = svg('tspan', { x: 8, y: rowMiddle(i) + 4 });
    span.textContent = l.text;
    lines.append(span);
  });
  g.append(lines);
  // The whole of each value cut short, on hover: one title per cut row.
  const cut = rows.lines.filter((l, i) => l.text !== l.full && fits(i)).map((l) => l.full);
  if (cut.length > 0) g.append(Object.assign(svg('title', {}), { textContent: cut.join('\n') }));
  for (let i = 0; i < rows.socketRows; i++) {
    const row = rows.socketRow + i;
    if (!fits(row)) break;
    const input = p.sockets.inputs[i];
    const output = p.sockets.outputs[i];
    if (input) g.append(...socket(input, SOCKET_INSET, rowMiddle(row), 'start'));
    if (output) g.append(...socket(output, p.width - SOCKET_INSET, rowMiddle(row), 'end'));
  }
  const mark = svg('text', { x: p.width - 8, y: 20, 'text-anchor': 'end' }, 'graph-node-mark');
  g.append(mark);
  const v: NodeView = { placed: p, g, box, mark };
  paintNode(v, ctx);
  return v;
}

/** The CSS class of a link type (`type-IMAGE`; `type-none` when unknown): its colour, from the theme (graph.css). */
export function typeClass(type: string | null): string {
  return `type-${type ? type.replace(/[^A-Za-z0-9_-]/g, '_') : 'none'}`;
}

/** A socket drawn on a node's edge at (x, y): its dot, coloured by type, and its name inside the box. */
function socket(s: Socket, x: number, y: number, anchor: 'start' | 'end'): SVGElement[] {
  const dot = svg('circle', { cx: x, cy: y, r: 4 }, `graph-socket ${typeClass(s.type)}`);
  dot.append(Object.assign(svg('title', {}), { textContent: s.type ? `${s.name}: ${s.type}` : s.name }));
  const label = svg(
    'text',
    { x: anchor === 'start' ? x + 9 : x - 9, y: y + 4, 'text-anchor': anchor },
    anchor === 'start' ? 'graph-socket-name' : 'graph-socket-type',
  );
  label.textContent = s.name;
  return [dot, label];
}

/** Sets the classes, mark, progress bar, problem marker, preview and label of one node from the current state. */
export function paintNode(v: NodeView, ctx: NodePaint): void {
  const n = v.placed.node;
  const s = ctx.states[n.id];
  const problems = ctx.problems.byNode[n.id] ?? [];
  const cls = `graph-node kind-${n.kind} mode-${n.mode}${n.unknownClass ? ' unknown' : ''}${s ? ` state-${s.status}` : ''}${problems.length > 0 ? ' has-problem' : ''}${ctx.selected === n.id ? ' selected' : ''}`;
  if (v.g.getAttribute('class') !== cls) v.g.setAttribute('class', cls);
  const mark = s ? STATUS_MARK[s.status] : n.mode === 'muted' ? '⊘' : n.mode === 'bypassed' ? '↷' : '';
  if (v.mark.textContent !== mark) v.mark.textContent = mark;
  const fraction =
    s?.status === 'running' && s.progress ? s.progress.value / s.progress.max : s?.status === 'running' ? 0 : -1;
  if (fraction >= 0 && !v.bar)
    v.g.append((v.bar = svg('rect', { x: 0, y: v.placed.height - 4, height: 4, width: 0 }, 'graph-node-bar')));
  if (v.bar) {
    v.bar.setAttribute('width', String((clampFraction(fraction) ?? 0) * v.placed.width));
    v.bar.setAttribute('visibility', fraction < 0 ? 'hidden' : 'visible');
  }
  if (problems.length > 0 && !v.problem) {
    v.problem = svg('g', { transform: `translate(${v.placed.width - 12},-10)` }, 'graph-node-problem');
    v.problem.append(
      svg('circle', { r: 9 }),
      Object.assign(svg('text', { 'text-anchor': 'middle', y: 4 }), { textContent: '!' }),
    );
    v.g.append(v.problem);
  }
  v.problem?.setAttribute('visibility', problems.length > 0 ? 'visible' : 'hidden');
  paintExtra(v, s);
  v.g.setAttribute('aria-label', describeNode(v, ctx));
}

/** Below the box: the failed node's message, the outputs' names, the latest preview (swapped once decoded). */
function paintExtra(v: NodeView, s: NodeRunState | undefined): void {
  const key = s ? `${s.error ?? ''}|${s.outputs.map((o) => o.id).join(',')}|${s.preview?.seq ?? ''}` : '';
  if ((v.extra?.dataset.key ?? '') === key) return;
  if (!v.extra) v.g.append((v.extra = svg('g', {}, 'graph-node-extra')));
  const extra = v.extra;
  extra.dataset.key = key;
  if (!s) {
    extra.replaceChildren();
    return;
  }
  const parts: SVGElement[] = [];
  let y = v.placed.height + 14;
  const chars = Math.max(8, Math.floor(v.placed.width / 6.6));
  if (s.error) {
    const t = svg('text', { x: 0, y }, 'graph-node-error');
    t.textContent = `✗ ${s.error.length > chars ? `${s.error.slice(0, chars - 1)}…` : s.error}`;
    parts.push(t);
    y += LINE;
  }
  if (s.outputs.length > 0) {
    const t = svg('text', { x: 0, y }, 'graph-node-outputs');
    const names = s.outputs.map((o) => o.name).join(', ');
    t.textContent = `⇣ ${names.length > chars ? `${names.slice(0, chars - 1)}…` : names}`;
    parts.push(t);
    y += LINE;
  }
  const old = extra.querySelector('image');
  if (s.preview) {
    const url = `data:${s.preview.contentType};base64,${s.preview.dataBase64}`;
    const img = new Image();
    img.src = url;
    const top = y - 10;
    // Double buffer: the visible frame changes only once the new one decoded (no flicker, no empty frame).
    img
      .decode()
      .then(() => {
        if (extra.dataset.key !== key) return;
        const image = svg(
          'image',
          {
            x: 0,
            y: top,
            width: v.placed.width,
            height: Math.round((v.placed.width * img.naturalHeight) / Math.max(1, img.naturalWidth)),
          },
          'graph-node-preview',
        );
        image.setAttribute('href', url);
        extra.querySelector('image')?.remove();
        extra.append(image);
      })
      .catch(() => undefined);
  }
  extra.replaceChildren(...parts, ...(old && s.preview ? [old] : []));
}

/** The accessible label of a node: title, class, id, mode, state, error and problems. */
export function describeNode(v: NodeView, ctx: NodePaint): string {
  const n = v.placed.node;
  const s = ctx.states[n.id];
  const w = ctx.words;
  const bits = [`${n.title}${n.classType && n.classType !== n.title ? ` (${n.classType})` : ''}, ${n.id}`];
  if (n.mode !== 'normal') bits.push(w[n.mode]);
  if (n.unknownClass) bits.push(w.unknownClass);
  if (s)
    bits.push(
      s.status === 'running' && s.progress ? `${w.running} ${s.progress.value}/${s.progress.max}` : w[s.status],
    );
  if (s?.error) bits.push(s.error);
  const problems = ctx.problems.byNode[n.id] ?? [];
  if (problems.length > 0)
    bits.push(`${problems.length} ${w.problems}: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`);
  return bits.join(', ');
}
