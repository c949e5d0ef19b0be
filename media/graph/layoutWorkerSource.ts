/**
 * The layout worker's script (./layoutWorker.ts bundled), as text: esbuild.mjs swaps this module for one holding the
 * bundle (the `graph-layout-worker` plugin), so a page starts the worker from a Blob URL of it, with no request (a
 * webview's own resources are on another origin, where `new Worker(url)` fails, and its scripts make no request).
 * Undefined in a build without that plugin (or in Node): the graph is then laid out on the page's thread.
 */
export const LAYOUT_WORKER_SOURCE: string | undefined = undefined;
