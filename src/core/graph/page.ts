/**
 * The workflow graph's standalone page (the webview's HTML), built by the host without `vscode`: a strict CSP, the
 * graph stylesheet, the script by its nonce. The first graph is not embedded: the webview says `ready` and the host
 * posts it (a graph can be large, and the page is restored after a reload with its own saved view).
 */

/** What the page is built from (see {@link graphHtml}). */
export interface GraphPageInput {
  /** `vscode.env.language`. */
  lang: string;
  /** `webview.cspSource`. */
  cspSource: string;
  /** A fresh nonce (base64 of `crypto.randomBytes`), new per render. */
  nonce: string;
  /** `asWebviewUri` of dist/webview/graph.css and graph.js. */
  graphCss: string;
  graphJs: string;
  /** The page's title (the workflow file's name), as text. */
  title: string;
  /** The workflow file's URI as a string, kept by the page in its saved state (a restored panel reopens it). */
  documentUri?: string;
}

/** Escapes a value for HTML text or an attribute in double quotes. */
function escape(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * The graph's page: CSP `default-src 'none'`; scripts only by the nonce; styles from `cspSource`; images from
 * `cspSource`, `data:` and `blob:` (previews); no `unsafe-inline` script, no remote origin; the stylesheet, the
 * `#graph` element the script fills (with the workflow's URI in `data-document` when given), and the script by its
 * nonce.
 */
export function graphHtml(p: GraphPageInput): string {
  const csp = ["default-src 'none'", `img-src ${p.cspSource} data: blob:`, `style-src ${p.cspSource}`, `font-src ${p.cspSource}`, `script-src 'nonce-${p.nonce}'`].join('; ');
  return [
    `<!DOCTYPE html><html lang="${escape(p.lang)}"><head><meta charset="utf-8">`,
    `<meta http-equiv="Content-Security-Policy" content="${escape(csp)};">`,
    `<meta name="viewport" content="width=device-width, initial-scale=1">`,
    `<title>${escape(p.title)}</title>`,
    `<link rel="stylesheet" href="${escape(p.graphCss)}"></head>`,
    `<body><main id="graph"${p.documentUri === undefined ? '' : ` data-document="${escape(p.documentUri)}"`}></main><script nonce="${escape(p.nonce)}" src="${escape(p.graphJs)}"></script></body></html>`,
  ].join('\n');
}
