/**
 * Workflow IntelliSense's core, vscode-free: node definitions read from `object_info`
 * ({@link parseObjectInfo}), the JSON Schema of API-format workflows generated from them ({@link workflowJsonSchema}),
 * and the validator for what a schema cannot say ({@link checkWorkflow}).
 */
export * from './objectInfo';
export * from './linkTypes';
export * from './generate';
export * from './validate';
export * from './definitionsSource';
export * from './words';
