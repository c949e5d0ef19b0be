/**
 * The element factories of the graph component: SVG and HTML elements made with their attributes, class and text.
 * Text is always set as `textContent`, never as HTML (the component draws untrusted workflow strings).
 */
const SVG = 'http://www.w3.org/2000/svg';

/** An SVG element `tag` with `attrs` set (as strings) and class `cls`. */
export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number> = {},
  cls?: string,
): SVGElementTagNameMap[K] {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (cls) e.setAttribute('class', cls);
  return e;
}

/** An HTML element `tag` with class `cls` and `text` set as text (never as HTML). */
export function html<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  cls?: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
