/**
 * The workflow graph's standalone page (the webview's HTML), built by the host without `vscode`: a strict CSP, the
 * graph stylesheet, the script by its nonce. The first graph is not embedded: the webview says `ready` and the host
 * posts it (a graph can be large, and the page is restored after a reload with its own saved view).
 */
import { escapeHtml, webviewPageHtml } from '../util/webviewPage';

/** What the page is built from (see {@link graphHtml}). */
interface GraphPageInput {
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

/**
 * The graph's page: CSP `default-src 'none'`; scripts only by the nonce; styles from `cspSource`; images from
 * `cspSource`, `data:` and `blob:` (previews); workers from `blob:` only (the layout worker, started from the text the
 * script carries: media/graph/layoutClient.ts); no `unsafe-inline` script, no remote origin; the stylesheet, the
 * `#graph` element the script fills (with the workflow's URI in `data-document` when given), and the script by its
 * nonce.
 */
export function graphHtml(p: GraphPageInput): string {
  return webviewPageHtml({
    ...p,
    imageSources: 'data: blob:',
    workerSources: 'blob:',
    stylesheets: [{ href: p.graphCss }],
    body: `<main id="graph"${p.documentUri === undefined ? '' : ` data-document="${escapeHtml(p.documentUri)}"`}></main>`,
    script: p.graphJs,
  });
}
