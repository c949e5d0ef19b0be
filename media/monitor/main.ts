/**
 * The job monitor webview: renders the view model (src/core/views/monitor/viewModel.ts) into the page the host
 * builds (src/extension/monitor/): `#monitor-state` holds the first state as JSON, `#monitor` is filled here.
 *
 * Rules it keeps:
 * - Safe: every host message goes through `parseHostMessage` (an invalid one is dropped); data is only ever set as
 *   text (`textContent`, attributes), never as HTML; nothing reaches the network (images are `data:` URLs or the
 *   host's webview resource URIs).
 * - No flicker: the page is built once and updated in place (element identities kept; outputs keyed by id); a preview
 *   frame is decoded off-screen and the visible `<img>` swapped only once it decoded (double buffer).
 * - Accessible: every control is a button with a label, progress is announced through an `aria-live="polite"` region
 *   on status changes and every 10%.
 * - The Graph section embeds the workflow graph's component (media/graph/render.ts, its stylesheet linked by the
 *   host): made at the first graph, drawn once per model, its nodes' states set on every update; choosing a node
 *   (click, Enter) is the monitor's Go to node for that node, when the graph was read from the workflow's file.
 */
import {
  parseHostMessage,
  parseMonitorState,
  PROTOCOL_VERSION,
  type MonitorPreview,
  type MonitorState,
} from '../../src/core/views/monitor/protocol';
import {
  announcement,
  initialView,
  persistedState,
  present,
  previewDecoded,
  previewFailed,
  previewUrl,
  reduce,
  type MonitorView,
} from '../../src/core/views/monitor/viewModel';
import { setText } from './dom';
import { buildPage, type Page } from './page';
import { render } from './render';
import { vscode } from './vscodeApi';

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
/** A time of the job (ISO 8601) in the user's locale; the text as it came when it is no date. */
function formatTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : dateFormat.format(d);
}

// ---- the preview's double buffer ------------------------------------------------------------------------------------

let decoding: MonitorPreview | null = null;

/** Decodes the pending frame off-screen; once decoded, swaps the visible image and tells the view model. */
function decodePending(page: Page): void {
  const pending = view.preview.pending;
  if (!pending || decoding === pending) return;
  const seq = pending.seq;
  decoding = pending;
  const url = previewUrl(pending);
  const buffer = new Image();
  buffer.src = url;
  buffer.decode().then(
    () => {
      if (decoding === pending) decoding = null;
      if (view.preview.pending !== pending) return; // overtaken by a newer frame, or another job
      const next = previewDecoded(view, seq);
      page.preview.img.src = url; // already decoded: the swap paints at once
      page.preview.img.hidden = false;
      update(next);
    },
    () => {
      if (decoding === pending) decoding = null;
      if (view.preview.pending === pending) update(previewFailed(view, seq));
    },
  );
}

// ---- start ------------------------------------------------------------------------------------------------------------

function readEmbeddedState(): MonitorState | undefined {
  const script = document.getElementById('monitor-state');
  if (script?.textContent) {
    try {
      const parsed = parseMonitorState(JSON.parse(script.textContent));
      if (parsed) return parsed;
    } catch {
      // fall through to the state kept by setState
    }
  }
  return parseMonitorState(vscode.getState());
}

const root = document.getElementById('monitor');
let view: MonitorView;
let page: Page | undefined;
let persisted = '';

function update(next: MonitorView): void {
  const before = view;
  view = next;
  if (page) paint(page, before);
}

/** Copies the view into the page; announces what changed since `before` (everything when undefined). */
function paint(p: Page, before: MonitorView | undefined): void {
  render(p, present(view, formatTime), view.state.strings);
  const said = announcement(before, view);
  if (said !== null) setText(p.live, said);
  const keep = persistedState(view);
  const key = JSON.stringify(keep);
  if (key !== persisted) {
    persisted = key;
    vscode.setState(keep);
  }
  decodePending(p);
}

/** Builds the page for a first state (the embedded one, else the first snapshot) and paints it. */
function start(state: MonitorState): void {
  if (!root) return;
  view = initialView(state);
  page = buildPage(root, state);
  paint(page, undefined);
}

window.addEventListener('message', (event: MessageEvent<unknown>) => {
  const message = parseHostMessage(event.data);
  if (!message) return; // not ours, or malformed: dropped
  if (!page) {
    if (message.type === 'snapshot') start(message.state);
    return;
  }
  if (message.type === 'snapshot' && message.state.job.jobId !== view.state.job.jobId) {
    // Another job in this panel (a re-run): the labels stay, the gallery starts over.
    page.outputs.cards.forEach((c) => c.li.remove());
    page.outputs.cards.clear();
  }
  update(reduce(view, message));
});

const first = readEmbeddedState();
if (first) start(first);
vscode.postMessage({ type: 'ready', version: PROTOCOL_VERSION });
