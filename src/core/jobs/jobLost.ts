/** The job its server no longer knows: the client's status `lost` and the error its followers get. */
import { ApiError, ComfyError } from '../http/errors';

/**
 * The server no longer knows a job (it answered 404, whatever its code: `not_found`, `job_not_found`, …): the job
 * went past its retention, or the server was restarted without it. Code `job_lost`; `jobId` names the job; the 404
 * is its `cause`. The job's state is then published with the client's status `lost` (model.ts {@link LOST_STATUS}).
 */
export class JobLostError extends ComfyError {
  constructor(
    readonly jobId: string,
    cause: unknown,
  ) {
    super(
      'job_lost',
      `the server no longer knows job ${jobId}: it expired, or the server was restarted without it. Re-run it to run its workflow again`,
      ApiError.is(cause) ? { requestId: cause.requestId, request: cause.request } : {},
      { cause },
    );
  }
}
