/**
 * The job side of a connection that speaks the deprecated v1 API (so that submit, the Jobs tree, notifications and
 * the job monitor work on it): the job service's {@link V1JobBackend} over a {@link V1Client}.
 * Everything is reported in v2's shapes (mapping.ts), so the service and its views need no v1 knowledge.
 */
import type { JobOperations, V1Accepted, V1JobBackend } from '../jobService';
import type { JobSnapshot } from '../v2/jobs';
import type { V1Client } from './client';
import { toJobSnapshot } from './mapping';
import { postWithSocket, watchV1Job, type PostedPrompt } from './watch';

/** Options of {@link v1JobBackend}. */
export interface V1JobBackendOptions {
  /**
   * The partner-service key sent as `extra_data.api_key_svc_org` with every prompt (Cloud API v1 (deprecated),
   * Endpoints, rule 1).
   */
  partnerKey?: string;
  /** false: follow jobs by polling only (tests). Default true. */
  useSocket?: boolean;
}

/** What {@link V1JobBackend.submit} hands to the watch of the job it posted. */
interface Handoff {
  posted: PostedPrompt;
}

/**
 * A {@link V1JobBackend} over `client` (which it owns: `close()` closes it).
 * - submit: the socket opened BEFORE the prompt is posted ({@link postWithSocket}), handed to the job's watch;
 * - watch: {@link watchV1Job} (prompt_id filtering, status polling alongside, bounded reconnects; the final state from
 *   the status endpoint), each status answer passed on as the server's word;
 * - get: the status endpoint, outputs confirmed once terminal (V1Client.job);
 * - cancel: `POST /api/queue {delete}` (a job not yet started), then the job as it stands. A running job is not
 *   interrupted: on the cloud `/api/interrupt` stops every running job of the account (V1Client.interrupt);
 * - downloadOutputs: through `/api/view`, its 302 followed without the key (V1Client.downloadOutputs).
 */
export function v1JobBackend(client: V1Client, options: V1JobBackendOptions = {}): V1JobBackend {
  const operations: JobOperations = {
    get: (jobId, signal) => client.job(jobId, { signal }),
    cancel: async (job, signal) => {
      const jobId = typeof job === 'string' ? job : job.job.id;
      await client.cancel(jobId, { signal });
      return client.job(jobId, { signal });
    },
    downloadOutputs: (snapshot, dir, signal) => client.downloadOutputs(snapshot, dir, { signal }),
  };
  return {
    ...operations,
    async submit(workflow, { signal }): Promise<V1Accepted> {
      const posted = await postWithSocket(client, workflow, { signal, partnerKey: options.partnerKey, useSocket: options.useSocket });
      const { promptId, requestId } = posted.submission;
      // Accepted and queued: the status endpoint says more at the watch's first poll.
      const snapshot: JobSnapshot = toJobSnapshot({ promptId, v1Status: 'pending', outputs: [], source: client.http.url('/api/prompt'), requestId });
      const handoff: Handoff = { posted };
      return { snapshot, handoff };
    },
    watch(jobId, { accepted, signal, onUpdate, onSnapshot }): Promise<JobSnapshot> {
      const posted = (accepted?.handoff as Handoff | undefined)?.posted;
      if (posted?.noSocketReason) onUpdate({ type: 'mode', mode: 'polling', reason: posted.noSocketReason });
      return watchV1Job(client, jobId, { socket: posted?.socket, workflow: posted?.prompt, useSocket: options.useSocket, signal, onUpdate, onSnapshot });
    },
    close: () => client.close(),
  };
}
