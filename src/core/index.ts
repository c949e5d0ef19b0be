/** The client core's public surface: no `vscode` import, runs in plain Node. */
export * from './errors';
export * from './clock';
export * from './http';
export * from './surface';
export * from './schemas';
export * from './linkResolution';
export * from './workflow';
export * from './events';
export * from './jobs';
export * from './watch';
export * from './download';
export * from './client';
export * from './version';
export * from './retry';
export * from './hash';
export * from './assets';
