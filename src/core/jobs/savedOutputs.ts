/**
 * Which file in an output folder is which job's output, proven rather than guessed. A name and a size cannot tell two
 * jobs' outputs apart (the self-hosted companion answers `hash: null` and outputs of one name and one size are common:
 * `ComfyUI_00001_.png` of two runs of one workflow), and a download that found its name taken is saved under the next
 * free one (`ComfyUI_00001_-1.png`). So:
 * - the moment a download of an output completes, a small hidden proof is written beside it,
 *   `.<first 32 hex of sha256(jobId + "\n" + outputId)>.output.json` ({@link SavedOutputProof}): the job and output it
 *   holds, the file's name, and the file's identity on disk (device, inode, size);
 * - an output is saved in a folder ({@link savedOutputPath}) only when its own proof is there and names a file that is
 *   still that very file (same inode and size: a file replaced or rewritten under that name is not it), or, for an
 *   output whose server gives its hash and that has no proof yet (saved before proofs were kept), when the file under
 *   its name hashes to it (the proof is then written).
 * Every download of a job's output into its folder goes through {@link downloadOutputInto} (the job-end owner, the
 * batch runner, the Jobs view and the monitor), so each writes its proof.
 */
import { createHash, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as z from 'zod/mini';
import { writeJsonAtomically, parseJsonObject } from '../state/stateStore';
import { hashFile } from '../util/hash';
import { exposed, lazy } from '../util/lazySchema';
import type { JobBackend } from './backend';
import type { Job, JobOutput } from './model';
import { outputFileName } from './outputFiles';

/** The proof that a file in an output folder is one job's output. Times are ISO 8601 strings. */
export interface SavedOutputProof {
  jobId: string;
  outputId: string;
  /** The file's name in the folder (the proof is beside it, so the folder may move). */
  name: string;
  /** The file's size, bytes. */
  bytes: number;
  /** The file's device and inode when it was saved (decimal strings: they can exceed 2^53). */
  dev: string;
  ino: string;
  savedAt: string;
}

/** An output of a job and its complete file on this machine (absolute path). */
export interface SavedOutputFile {
  output: JobOutput;
  path: string;
}

/** The shape of a proof file, read tolerantly (unknown fields kept); built at first use. */
const ProofSchema = exposed(
  lazy(() =>
    z.looseObject({
      jobId: z.string(),
      outputId: z.string(),
      name: z.string(),
      bytes: z.number(),
      dev: z.string(),
      ino: z.string(),
      savedAt: z.string(),
    }),
  ),
);

/** The proof file of output `outputId` of job `jobId` in folder `dir` (hidden; named for the job and output). */
export function outputProofPath(dir: string, jobId: string, outputId: string): string {
  const digest = createHash('sha256').update(`${jobId}\n${outputId}`, 'utf8').digest('hex').slice(0, 32);
  return path.join(dir, `.${digest}.output.json`);
}

/**
 * Writes the proof that `file` (in its folder) is output `outputId` of job `jobId`, from the file as it is on disk
 * now: called the moment its download completed. Written atomically (a temporary file `<proof>.<random>.tmp` renamed
 * over it); the temporary files of this proof that a killed process left behind are removed then.
 * @throws as the file system.
 */
export async function recordSavedOutput(jobId: string, outputId: string, file: string): Promise<void> {
  const stat = await fs.lstat(file, { bigint: true });
  const dir = path.dirname(path.resolve(file));
  const proofFile = outputProofPath(dir, jobId, outputId);
  const proof: SavedOutputProof = {
    jobId,
    outputId,
    name: path.basename(file),
    bytes: Number(stat.size),
    dev: String(stat.dev),
    ino: String(stat.ino),
    savedAt: new Date().toISOString(),
  };
  await writeJsonAtomically(proofFile, proof, `${proofFile}.${randomBytes(6).toString('hex')}.tmp`);
  const leftover = `${path.basename(proofFile)}.`;
  for (const name of await fs.readdir(dir).catch(() => [])) {
    if (name.startsWith(leftover) && name.endsWith('.tmp')) await fs.rm(path.join(dir, name), { force: true });
  }
}

/**
 * The file of output `output` of job `jobId` complete in folder `dir`, with its size on disk in bytes (see the module
 * comment: its own proof naming a file that is still the file saved, or, without a proof, the file under its name
 * hashing to the server's hash); undefined when it is not there (or the folder cannot be read).
 */
export async function savedOutputPath(
  output: Pick<JobOutput, 'id' | 'name' | 'contentType' | 'hash'>,
  dir: string,
  jobId: string,
): Promise<{ path: string; bytes: number } | undefined> {
  const proofFile = outputProofPath(dir, jobId, output.id);
  const parsed = ProofSchema.safeParse(parseJsonObject(await fs.readFile(proofFile, 'utf8').catch(() => '')));
  if (parsed.success && parsed.data.jobId === jobId && parsed.data.outputId === output.id) {
    const proof = parsed.data;
    // The name comes from a file in the folder: it must stay a plain name in it.
    if (proof.name !== path.basename(proof.name)) return undefined;
    const file = path.join(path.resolve(dir), proof.name);
    const stat = await fs.lstat(file, { bigint: true }).catch(() => undefined);
    if (
      stat?.isFile() &&
      String(stat.dev) === proof.dev &&
      String(stat.ino) === proof.ino &&
      Number(stat.size) === proof.bytes
    )
      return { path: file, bytes: proof.bytes };
    return undefined;
  }
  if (!output.hash) return undefined;
  const file = path.join(path.resolve(dir), outputFileName(output));
  const stat = await fs.lstat(file).catch(() => undefined);
  if (!stat?.isFile()) return undefined;
  if ((await hashFile(file).catch(() => undefined)) !== output.hash) return undefined;
  await recordSavedOutput(jobId, output.id, file).catch(() => undefined); // no proof: hashed again next time
  return { path: file, bytes: stat.size };
}

/**
 * Downloads output `output` of `job` into `dir` through `backend` (a free name, nothing overwritten) and writes its
 * proof the moment it is complete ({@link recordSavedOutput}).
 * @returns the file's absolute path.
 * @throws as {@link JobBackend.downloadOutputs} (no proof written).
 */
export async function downloadOutputInto(
  backend: JobBackend,
  job: Job,
  output: JobOutput,
  dir: string,
  signal?: AbortSignal,
): Promise<string> {
  const [saved] = await backend.downloadOutputs({ ...job, outputs: [output] }, dir, { signal });
  if (!saved) throw new Error(`the download of output ${output.id} of job ${job.id} gave no file`);
  // A proof that cannot be written leaves the file as it is: without it the output is downloaded again next time.
  await recordSavedOutput(job.id, output.id, saved.path).catch(() => undefined);
  return path.resolve(saved.path);
}

/**
 * Downloads into `dir` the outputs of `job` not already complete there ({@link savedOutputPath}), one at a time, so a
 * download cut short (a window closed, a process killed) is finished later without a second copy of what was saved.
 * @returns every output with its file, in the job's order (found complete or downloaded now).
 * @throws as {@link JobBackend.downloadOutputs} (the files saved before the error stay, with their proofs).
 */
export async function downloadMissingOutputs(
  backend: JobBackend,
  job: Job,
  dir: string,
  signal?: AbortSignal,
): Promise<SavedOutputFile[]> {
  const saved: SavedOutputFile[] = [];
  for (const output of job.outputs) {
    const found = await savedOutputPath(output, dir, job.id);
    saved.push({ output, path: found?.path ?? (await downloadOutputInto(backend, job, output, dir, signal)) });
  }
  return saved;
}

/**
 * Downloads one output of job `jobId` into `dir` from a fresh read of the job (an output's link may have expired
 * since the job was shown), through `backend`, with its proof (savedOutputs.ts `downloadOutputInto`).
 * @returns the file's path, or undefined when the server no longer lists that output.
 * @throws as {@link JobBackend.get} and {@link JobBackend.downloadOutputs}.
 */
export async function downloadJobOutput(
  backend: JobBackend,
  jobId: string,
  outputId: string,
  dir: string,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const { job } = await backend.get(jobId, signal);
  const output = job.outputs.find((o) => o.id === outputId);
  if (!output) return undefined;
  return downloadOutputInto(backend, job, output, dir, signal);
}
