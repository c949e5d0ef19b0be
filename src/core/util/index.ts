/**
 * What is tied to no API and no view (the public surface of core/util): workflow formats and positions, stable JSON,
 * hashing, byte counts, text and file-name safety, input files, words (l10n), shapes built at first use, the webview
 * page base, folder watching. The hash worker (hashWorker.ts) is an entry point of its own and is not exported here.
 */
export * from './bytes';
export * from './fileNames';
export * from './hash';
export * from './inputFile';
export * from './json';
export * from './l10n';
export * from './lazySchema';
export * from './lockfile';
export * from './secretLearning';
export * from './text';
export * from './version';
export * from './watchFolder';
export * from './webviewPage';
export * from './workflow';
export * from './workflowPositions';
