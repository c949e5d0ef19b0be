/**
 * The public surface of the views' models, without `vscode`: the Jobs tree (jobTree.ts, with its entries and items),
 * the Assets tree (assetTree.ts), the end-of-job notice (jobEndNotice.ts) and the words shown to a person about an
 * error (presentation.ts). The job list (jobList.ts), the job documents (jobDocuments.ts) and the job monitor
 * (monitor/) are imported from their own modules.
 */
export * from './presentation';
export * from './jobTree';
export * from './assetTree';
export * from './jobEndNotice';
