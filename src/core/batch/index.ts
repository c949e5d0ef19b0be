/**
 * The public surface of batches: a workflow and its variations (variations.ts), its durable plan (plan.ts), the run
 * that drives it to its end and resumes it after a crash (run.ts, resume.ts, gate.ts), its status and its cancel
 * (status.ts, cancel.ts). The contact sheet (contactSheet.ts, sheetProtocol.ts) and the quick input of variations
 * (quickInput.ts) are imported from their own modules.
 */
export * from './variations';
export * from './gate';
export * from './plan';
export * from './resume';
export * from './status';
export * from './run';
export * from './outcomes';
export * from './cancel';
