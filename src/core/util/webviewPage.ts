/**
 * The HTML every webview page of ours starts from (the monitor, the workflow graph, the contact sheet), built without
 * `vscode`: a strict Content Security Policy (`default-src 'none'`; scripts only by the page's nonce; styles and fonts
 * from the webview's `cspSource`; images from `cspSource` and only the extra sources a page names; workers only from
 * the sources a page names, none by default; no `unsafe-inline` script, no remote origin), its stylesheets in order, its body, and its one script by the nonce.
 */

/** Escapes a value for HTML text or an attribute in double quotes. */
export function escapeHtml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** What a page is written from. URIs are `asWebviewUri` strings; every value is escaped here but `body`. */
interface WebviewPageParts {
  /** `vscode.env.language`. */
  lang: string;
  /** `webview.cspSource`. */
  cspSource: string;
  /** A fresh nonce (base64 of `crypto.randomBytes`), new per page written. */
  nonce: string;
  /** Image sources beyond `cspSource`, e.g. `data: blob:` for previews; none by default. */
  imageSources?: string;
  /** Worker sources (`worker-src`), e.g. `blob:` for a worker the page starts from its own script's text; none by default. */
  workerSources?: string;
  /** The page's title, as text; with it the page also gets a viewport. */
  title?: string;
  /** Stylesheets in order (a later one's rules win); `id` for the codicon sheet `vscode-codicon-stylesheet`. */
  stylesheets: ReadonlyArray<{ href: string; id?: string }>;
  /** The body's markup before the script, already safe (the caller escapes what it puts in). */
  body: string;
  /** The page's script, run by the nonce. */
  script: string;
}

/** The page's HTML (see the module comment). */
export function webviewPageHtml(p: WebviewPageParts): string {
  const images = p.imageSources ? `${p.cspSource} ${p.imageSources}` : p.cspSource;
  const csp = [
    "default-src 'none'",
    `img-src ${images}`,
    `style-src ${p.cspSource}`,
    `font-src ${p.cspSource}`,
    `script-src 'nonce-${p.nonce}'`,
    ...(p.workerSources ? [`worker-src ${p.workerSources}`] : []),
  ].join('; ');
  return [
    `<!DOCTYPE html><html lang="${escapeHtml(p.lang)}"><head><meta charset="utf-8">`,
    `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)};">`,
    ...(p.title === undefined
      ? []
      : [
          `<meta name="viewport" content="width=device-width, initial-scale=1">`,
          `<title>${escapeHtml(p.title)}</title>`,
        ]),
    ...p.stylesheets.map(
      (s, i) =>
        `<link rel="stylesheet" href="${escapeHtml(s.href)}"${s.id ? ` id="${escapeHtml(s.id)}"` : ''}>${i === p.stylesheets.length - 1 ? '</head>' : ''}`,
    ),
    `<body>${p.body}<script nonce="${escapeHtml(p.nonce)}" src="${escapeHtml(p.script)}"></script></body></html>`,
  ].join('\n');
}
