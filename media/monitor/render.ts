/**
 * Updates in place: the monitor page (./page.ts) takes a presentation of the view model, changing only the text,
 * attributes and elements that differ (element identities kept; output cards keyed by id); the Graph section makes
 * the graph component at the first graph and draws each model once.
 */
import type { MonitorState } from '../../src/core/views/monitor/protocol';
import type { MonitorPresentation, OutputCard } from '../../src/core/views/monitor/viewModel';
import { GraphView } from '../graph/render';
import { button, el, enable, setText, show } from './dom';
import type { CardElements, Page } from './page';
import { vscode } from './vscodeApi';

/** Copies presentation `p` into `page`. */
export function render(page: Page, p: MonitorPresentation, strings: MonitorState['strings']): void {
  const h = p.header;
  setText(page.name, h.name);
  setText(page.badge, h.status);
  page.badge.dataset.kind = h.badge;
  setText(page.jobId, h.jobId);
  setText(page.connection, h.connection);
  h.times.forEach((t, i) => {
    const row = page.times[i];
    if (!row) return;
    setText(row.value, t.text);
    row.value.classList.toggle('not-yet', t.iso === null);
    if (t.iso !== null) row.value.title = t.iso;
  });
  setText(page.retrying, h.retrying);
  show(page.retrying, h.retrying !== null);
  enable(page.actions.cancel, p.actions.cancel);
  enable(page.actions.rerun, p.actions.rerun);
  enable(page.actions.openWorkflow, p.actions.openWorkflow);
  enable(page.actions.revealOutputs, p.actions.revealOutputs);

  const pr = p.progress;
  show(page.progress.root, pr.visible);
  if (pr.value === null) {
    page.progress.bar.indeterminate = true;
  } else {
    page.progress.bar.indeterminate = false;
    const percent = Math.round(pr.value * 1000) / 10; // the bar's max is 100 (its aria-valuenow is rounded)
    if (page.progress.bar.value !== percent) page.progress.bar.value = percent;
  }
  setText(page.progress.percent, pr.percentText);
  if (pr.percentText !== null) page.progress.bar.setAttribute('aria-valuetext', pr.percentText);
  [pr.nodes, pr.node, pr.step, pr.message].forEach((text, i) => {
    const li = page.progress.details[i];
    if (!li) return;
    setText(li, text);
    show(li, text !== null && text !== '');
  });
  setText(page.progress.queue, pr.queue);
  show(page.progress.queue, pr.queue !== null);

  show(page.preview.root, p.preview.visible);
  setText(page.preview.from, p.preview.from);
  setText(page.preview.placeholder, p.preview.placeholder);
  show(page.preview.placeholder, p.preview.placeholder !== null);
  // The shown frame's src is set only by the decoder (swap after decode); a frame dropped by a snapshot of another
  // job (a re-run) clears it.
  if (p.preview.src === null && !page.preview.img.hidden) {
    page.preview.img.hidden = true;
    page.preview.img.removeAttribute('src');
  }

  const e = p.error;
  show(page.error.root, e !== null);
  if (e) {
    setText(page.error.code, e.code);
    show(page.error.code, e.code !== null);
    setText(page.error.message, e.message);
    show(page.error.message, e.message !== null);
    setText(page.error.node, e.node);
    show(page.error.node.parentElement as HTMLElement, e.node !== null);
    enable(page.error.goToNode, p.actions.goToNode);
    setText(page.error.tracebackText, e.traceback);
    show(page.error.traceback, e.traceback !== null && e.traceback !== '');
  }

  renderOutputs(page, p.outputs.cards, strings);
  setText(page.outputs.empty, p.outputs.empty);
  show(page.outputs.empty, p.outputs.empty !== null);
  enable(page.outputs.downloadAll, p.actions.downloadAll);

  show(page.logs.root, p.logs !== null);
  if (p.logs !== null) {
    const pre = page.logs.pre;
    const atBottom = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
    const text = p.logs.join('\n');
    if (pre.textContent !== text) {
      pre.textContent = text;
      if (atBottom) pre.scrollTop = pre.scrollHeight; // follow the tail unless the reader scrolled up
    }
  }

  show(page.metrics.root, p.metrics.length > 0);
  renderMetrics(page.metrics.list, p.metrics);

  renderGraph(page.graph, p.graph);
}

/**
 * The Graph section: the line (loading, or why no graph), else the graph drawn once per model with its states (and
 * the note under it when its sockets have no types).
 */
function renderGraph(g: Page['graph'], p: MonitorPresentation['graph']): void {
  setText(g.text, p.text);
  show(g.text, p.text !== null);
  setText(g.note, p.note);
  show(g.note, p.note !== null);
  show(g.host, p.model !== null);
  g.canReveal = p.canReveal;
  if (p.model === null) return;
  if (!g.view) {
    g.view = new GraphView(g.host, {
      onReveal: (nodeId) => {
        if (g.canReveal) vscode.postMessage({ type: 'goToNode', nodeId });
      },
    });
  }
  // Drawn once per model (the host posts it once, and again after a reload); states change classes only.
  if (g.model !== p.model) {
    g.model = p.model;
    g.view.setGraph(p.model);
  }
  g.view.setStates(p.states);
}

function renderOutputs(page: Page, cards: OutputCard[], strings: MonitorState['strings']): void {
  const known = page.outputs.cards;
  const ids = new Set(cards.map((c) => c.id));
  for (const [id, c] of known) {
    if (!ids.has(id)) {
      c.li.remove();
      known.delete(id);
    }
  }
  let previous: Element | null = null;
  for (const card of cards) {
    let c = known.get(card.id);
    if (!c) {
      c = buildCard(card.id, strings);
      known.set(card.id, c);
    }
    updateCard(c, card);
    // Keep the order of the list without moving elements that are already in place (no flicker).
    const expected: Element | null = previous ? previous.nextElementSibling : page.outputs.list.firstElementChild;
    if (expected !== c.li) page.outputs.list.insertBefore(c.li, expected);
    previous = c.li;
  }
}

function buildCard(outputId: string, strings: MonitorState['strings']): CardElements {
  const li = el('li', 'card');
  const open = el('button', 'card-open');
  open.type = 'button';
  const img = el('img', 'thumb');
  img.alt = '';
  img.loading = 'lazy';
  const icon = el('vscode-icon', 'file-icon');
  icon.setAttribute('name', 'file');
  icon.setAttribute('size', '32');
  const name = el('span', 'card-name');
  const meta = el('span', 'card-meta');
  open.append(img, icon, name, meta);
  open.addEventListener('click', () => vscode.postMessage({ type: 'openOutput', outputId }));
  const save = button(strings.save, 'save', { type: 'saveOutput', outputId });
  // A PNG may carry the workflow that made it: "Open Workflow from Image" (shown for PNG outputs only).
  const workflow = button(strings.imageWorkflow, 'json', { type: 'openImageWorkflow', outputId });
  const actions = el('div', 'card-actions');
  actions.append(save, workflow);
  li.append(open, actions);
  return { li, open, img, icon, name, meta, save, workflow };
}

function updateCard(c: CardElements, card: OutputCard): void {
  c.open.setAttribute(
    'aria-label',
    `${card.openLabel}${card.typeLabel ? `, ${card.typeLabel}` : ''}${card.sizeLabel ? `, ${card.sizeLabel}` : ''}`,
  );
  c.open.title = card.name;
  c.save.setAttribute('aria-label', card.saveLabel);
  c.workflow.setAttribute('aria-label', card.workflowLabel);
  show(c.workflow, card.pngWorkflow);
  setText(c.name, card.name);
  setText(c.meta, [card.typeLabel, card.sizeLabel].filter((x) => x !== '').join(' · '));
  const image = card.kind === 'image' && card.thumbnail !== null && isLocalImageUrl(card.thumbnail);
  if (image && c.img.getAttribute('src') !== card.thumbnail) c.img.src = card.thumbnail as string;
  show(c.img, image);
  show(c.icon, !image);
  c.li.classList.toggle('file', !image);
}

/** Images come only from `data:` URLs or the host's webview resource URIs (never a remote origin; the CSP agrees). */
function isLocalImageUrl(url: string): boolean {
  return (
    /^data:image\//.test(url) ||
    /^https:\/\/[^/]*\.vscode-(resource|cdn)\.net\//.test(url) ||
    /^vscode-(webview-)?resource:/.test(url) ||
    /^blob:/.test(url)
  );
}

function renderMetrics(list: HTMLElement, metrics: MonitorPresentation['metrics']): void {
  const rows = Array.from(list.children);
  const need = metrics.length * 2;
  while (rows.length > need) rows.pop()?.remove();
  metrics.forEach((m, i) => {
    let dt = list.children[i * 2] as HTMLElement | undefined;
    let dd = list.children[i * 2 + 1] as HTMLElement | undefined;
    if (!dt || !dd) {
      dt = el('dt');
      dd = el('dd');
      list.append(dt, dd);
    }
    setText(dt, m.name);
    setText(dd, m.text);
    dd.classList.toggle('not-yet', m.notYet);
  });
}
