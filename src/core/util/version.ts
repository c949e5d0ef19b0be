/** The extension's and CLI's version, sent in the User-Agent. A unit test keeps it equal to package.json's. */
export const VERSION = '0.1.0';

/** `comfy-cloud/<version> (<product>; node/<version>)`: names the client in every request. */
export function userAgent(product: 'vscode' | 'cli' | 'core' = 'core'): string {
  return `comfy-cloud/${VERSION} (${product}; node/${process.versions.node})`;
}
