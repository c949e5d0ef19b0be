import * as vscode from 'vscode';
import * as os from 'node:os';
import * as path from 'node:path';
import { promises as fs } from 'node:fs';
import { safeFileName } from '../../core/util';
import type { Config } from './config';

/**
 * The one place that says where a job's outputs go (the submission's download, the job-end service, the monitor and
 * the Jobs view all ask it): `comfyCloud.outputDirectory/<job-id>/` when set (relative paths resolve against the
 * workspace folder, `~` against the home folder); otherwise `.comfy/outputs/<job-id>/` in the workspace folder of
 * the workflow file, with a `.gitignore` that keeps them out of git. A workflow without a file in a workspace folder
 * (an untitled editor such as "Open a Sample Workflow", or a file outside every folder) takes the first workspace
 * folder, so every view finds the outputs where the download put them; only without a local workspace folder do
 * they go to the extension's global storage.
 */
export class OutputLocations {
  constructor(
    /** `comfyCloud.outputDirectory`. */
    private readonly config: Pick<Config, 'outputDirectory'>,
    private readonly globalStorage: vscode.Uri,
  ) {}

  /**
   * The folder for one job's outputs (created): asked only to write into it (a failed job leaves no empty folder;
   * a view that only looks takes {@link folderOf} and core `watchFolderToBe`). `workflowUri`: the workflow's file
   * (any scheme; an `untitled:` one counts as no file). @throws as the file system.
   */
  async forJob(jobId: string, workflowUri: vscode.Uri | undefined): Promise<string> {
    const dir = this.folderOf(jobId, workflowUri);
    const local = localWorkspaceFolder(workflowUri);
    if (!this.config.outputDirectory() && local) {
      const root = path.join(local, '.comfy');
      await fs.mkdir(root, { recursive: true });
      // Outputs are data, not source: keep the whole .comfy folder out of git.
      await fs.writeFile(path.join(root, '.gitignore'), '*\n', { flag: 'wx' }).catch(() => undefined);
    }
    await fs.mkdir(dir, { recursive: true });
    return dir;
  }

  /**
   * The folder {@link forJob} makes for `id` (a job id, or a batch id: a batch's outputs go under `<batch-id>/`),
   * without creating it. `id` passes through the one sanitizer of file names.
   */
  folderOf(id: string, workflowUri: vscode.Uri | undefined): string {
    // The job id comes from the server: the one sanitizer makes it a safe folder name (`..` or `a/b` never escape).
    const safeId = safeFileName(id, 'job');
    const local = localWorkspaceFolder(workflowUri);
    const setting = this.config.outputDirectory();
    if (setting) {
      const expanded = setting.startsWith('~') ? path.join(os.homedir(), setting.slice(1)) : setting;
      const base = path.isAbsolute(expanded) ? expanded : path.resolve(local ?? this.globalStorage.fsPath, expanded);
      return path.join(base, safeId);
    }
    if (local) return path.join(local, '.comfy', 'outputs', safeId);
    return path.join(this.globalStorage.fsPath, 'outputs', safeId);
  }
}

/**
 * The local workspace folder of a workflow: the one holding its file, else the first local workspace folder (an
 * untitled workflow, a file outside every folder); undefined without a local workspace folder.
 */
export function localWorkspaceFolder(workflowUri: vscode.Uri | undefined): string | undefined {
  const own = workflowUri?.scheme === 'file' ? vscode.workspace.getWorkspaceFolder(workflowUri) : undefined;
  const folder = own ?? vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file');
  return folder?.uri.scheme === 'file' ? folder.uri.fsPath : undefined;
}
