/**
 * Where the Idempotency-Key of a model invocation is persisted BEFORE the request is sent (Model router API,
 * POST /v1/models/{provider}/{model}: a retry with the same key collects the running generation; public sources:
 * persist it before sending), so a crash or a timeout never leads to a new key for the same call.
 */
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { writeJsonAtomically } from '../state/stateStore';

/** What is remembered of one invocation before it is sent. */
export interface RouterKeyRecord {
  idempotencyKey: string;
  modelId: string;
  /** When the key was minted, ms since the epoch. */
  createdAt: number;
  /** Size of the input sent, bytes. */
  inputBytes: number;
}

/** Persists keys; `save` resolves once the record is durable (the request waits for it). */
export interface RouterKeyStore {
  save(record: RouterKeyRecord): Promise<void>;
}

/**
 * A key store of one small JSON record per key in `dir` (`<key>.json`, written to a temporary file and renamed, as
 * ../state/stateStore.ts writes job records). The CLI and the extension pass a subfolder of their state dir.
 */
export function fileKeyStore(dir: string): RouterKeyStore & { dir: string } {
  return {
    dir,
    async save(record) {
      await fs.mkdir(dir, { recursive: true });
      // Keys minted here are UUIDs; a caller-given key is written under a name made safe for any file system.
      const name = record.idempotencyKey.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 200);
      const file = path.join(dir, `${name}.json`);
      await writeJsonAtomically(file, record, `${file}.${randomUUID()}.tmp`);
    },
  };
}
