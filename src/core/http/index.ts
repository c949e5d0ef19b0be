/**
 * What every API of the core shares (its public surface): the transport (bounded bodies, timeouts, credentials only
 * to their origin, request ids) over an injected engine, the error base and the refusals the service's APIs share, the
 * retry policy, the clock, base URLs, link resolution, and the download of content into a file or folder. The default
 * engine is chosen by the build (defaultEngine.ts in Node, defaultEngine.extension.ts in the extension) and is not
 * exported here.
 */
export * from './errors';
export * from './clock';
export * from './engine';
export * from './fetchEngine';
export * from './transport';
export { describeNetworkError } from './failures';
export * from './retry';
export * from './baseUrl';
export * from './linkResolution';
export * from './download';
