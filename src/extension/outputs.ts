import * as vscode from 'vscode';
import * as os from 'node:os';
import * as path from 'node:path';
import { promises as fs } from 'node:fs';
import { safeFileName } from '../core';
import type { Config } from './config';

/**
 * Where a job's outputs go: `comfyCloud.outputDirectory/<job-id>/` when set (relative paths resolve against the
 * workspace folder, `~` against the home folder); otherwise `.comfy/outputs/<job-id>/` in the workspace folder of
 * the workflow file, with a `.gitignore` that keeps them out of git; without a (local) workspace, the
 * extension's global storage.
 */
export class OutputLocations {
  constructor(
    /** `comfyCloud.outputDirectory`. */
    private readonly config: Pick<Config, 'outputDirectory'>,
    private readonly globalStorage: vscode.Uri,
  ) {}

  /** The folder for one job's outputs (created). */
  async forJob(jobId: string, workflowUri: vscode.Uri | undefined): Promise<string> {
    // The job id comes from the server: the one sanitizer makes it a safe folder name (`..` or `a/b` never escape).
    const safeId = safeFileName(jobId, 'job');
    const folder = workflowUri ? vscode.workspace.getWorkspaceFolder(workflowUri) : vscode.workspace.workspaceFolders?.[0];
    const local = folder?.uri.scheme === 'file' ? folder.uri.fsPath : undefined;
    const setting = this.config.outputDirectory();
    let dir: string;
    if (setting) {
      const expanded = setting.startsWith('~') ? path.join(os.homedir(), setting.slice(1)) : setting;
      const base = path.isAbsolute(expanded) ? expanded : path.resolve(local ?? this.globalStorage.fsPath, expanded);
      dir = path.join(base, safeId);
    } else if (local) {
      const root = path.join(local, '.comfy');
      await fs.mkdir(root, { recursive: true });
      // Outputs are data, not source: keep the whole .comfy folder out of git.
      await fs.writeFile(path.join(root, '.gitignore'), '*\n', { flag: 'wx' }).catch(() => undefined);
      dir = path.join(root, 'outputs', safeId);
    } else {
      dir = path.join(this.globalStorage.fsPath, 'outputs', safeId);
    }
    await fs.mkdir(dir, { recursive: true });
    return dir;
  }
}
