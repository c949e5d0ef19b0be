/**
 * The layout worker's entry point (bundled by esbuild.mjs on its own and carried inside the scripts that draw graphs,
 * which start it from a Blob URL: ./layoutClient.ts). It lays out what the page posts, one request at a time, with
 * dagre, off the page's thread, so panning and zooming stay smooth while a large graph is laid out.
 */
import { handleLayoutMessage } from './layoutProtocol';

/** The worker's global scope, as far as it is used here (the webview's type check knows the window's only). */
interface WorkerScope {
  onmessage: ((event: { data: unknown }) => void) | null;
  postMessage(message: unknown): void;
}

const scope = globalThis as unknown as WorkerScope;
scope.onmessage = (event) => {
  const answer = handleLayoutMessage(event.data);
  if (answer) scope.postMessage(answer);
};
