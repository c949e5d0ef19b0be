/**
 * The monitor page's small DOM helpers: elements made with text (never HTML), text and visibility changed only when
 * they differ (no needless layout), buttons that post a message to the host, and labelled sections.
 */
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-collapsible/index.js';
import '@vscode-elements/elements/dist/vscode-icon/index.js';
import '@vscode-elements/elements/dist/vscode-progress-bar/index.js';
import type { WebviewMessage } from '../../src/core/views/monitor/protocol';
import { vscode } from './vscodeApi';

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** Sets the text of `e` (null: empty) when it differs. */
export function setText(e: HTMLElement, text: string | null): void {
  const t = text ?? '';
  if (e.textContent !== t) e.textContent = t;
}

/** Shows or hides `e` when that changes. */
export function show(e: HTMLElement, visible: boolean): void {
  if (e.hidden === visible) e.hidden = !visible;
}

/** A `vscode-button` labelled `label` with codicon `icon` that posts `message` when enabled and clicked. */
export function button(label: string, icon: string, message: WebviewMessage, secondary = true): HTMLElement {
  const b = el('vscode-button');
  b.textContent = label;
  b.setAttribute('icon', icon);
  if (secondary) b.setAttribute('secondary', '');
  b.addEventListener('click', () => {
    if (!b.hasAttribute('disabled')) vscode.postMessage(message);
  });
  return b;
}

/** Enables or disables a `vscode-button`. */
export function enable(b: HTMLElement, enabled: boolean): void {
  if (enabled) b.removeAttribute('disabled');
  else if (!b.hasAttribute('disabled')) b.setAttribute('disabled', '');
}

/** A section with class `className` labelled by its `h2` heading. */
export function section(className: string, heading: string): { root: HTMLElement; title: HTMLElement } {
  const root = el('section', `section ${className}`);
  const title = el('h2', 'section-title', heading);
  const id = `h-${className}`;
  title.id = id;
  root.setAttribute('aria-labelledby', id);
  root.append(title);
  return { root, title };
}
