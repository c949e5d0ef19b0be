/**
 * Shared by the fetch-transport-*.test.ts suites (the transport over each engine): the bounds an endless body is
 * checked against, and `settle`, which lets every pending callback run.
 */

export const MiB = 1024 * 1024;
/** What an endless body's server sends at most: far past any cap, so a read that ignores its cap reads all of it. */
export const ENDLESS_BYTES = 64 * MiB;
/** How far past its cap a capped read may pull: the chunk that crossed the cap and one in hand (each at most 64 KiB plus what the engine had buffered). */
export const READ_SLACK_BYTES = 512 * 1024;

/** Lets every pending callback and promise run (to assert that something did NOT happen after a clock step). */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
