/**
 * A monitor's output files: which of its job's outputs are saved in the job's output folder (found by the one rule of
 * a complete output file, core `savedOutputPath`, whoever saved them: the job-end service, the Jobs view or the
 * monitor), and downloading one on demand. What is kept here is local files, not job state: the job itself is read
 * from the panel each time.
 */
import * as vscode from 'vscode';
import { promises as fs } from 'node:fs';
import { downloadJobOutput, savedOutputPath, type Job, type JobOutput } from '../../core';
import { watchFolderToBe } from '../../core/util';
import type { SavedOutput } from '../../core/views/monitor/monitorPage';
import type { JobServiceHost } from '../platform/jobServiceHost';

const IMAGE_TYPE = /^image\/(png|jpe?g|gif|webp|bmp)$/i;
const IMAGE_NAME = /\.(png|jpe?g|gif|webp|bmp)$/i;

/** What {@link MonitorOutputFiles} needs from its panel. */
export interface MonitorOutputFilesDeps {
  jobId: string;
  /** The job's output folder (not made until an output is written into it). */
  outputDir: string;
  /** Makes the output folder (with its .gitignore) before an output is written into it. */
  makeOutputDir(): Promise<string>;
  jobs: JobServiceHost;
  webview: vscode.Webview;
  /** The job as the panel shows it now (its outputs are what can be saved). */
  job(): Job | undefined;
  /** An output was found saved, or was just downloaded. */
  onSaved(outputId: string): void;
  /** A look after a burst of folder events found new files. */
  onFound(): void;
}

/** The saved files of one monitor's job (see the module's docstring). Dispose it to stop watching the folder. */
export class MonitorOutputFiles implements vscode.Disposable {
  /** Output id → its file in the output folder (path, size in bytes), once found saved. */
  private readonly saved = new Map<string, { path: string; bytes: number }>();
  private readonly folderWatcher: { close(): void };
  private rescanTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly deps: MonitorOutputFilesDeps) {
    // The folder may not exist yet: it is made when the job's first output is written (outputs.ts).
    this.folderWatcher = watchFolderToBe(deps.outputDir, () => this.scheduleRescan());
  }

  /** The output's saved file as the page shows it (an image from its webview URI), or undefined while not saved. */
  savedOutput(output: JobOutput): SavedOutput | undefined {
    const file = this.saved.get(output.id);
    if (!file) return undefined;
    // Every image output is shown from its downloaded file (a webview URI inside the output folder, a local resource root).
    const image = IMAGE_TYPE.test(output.contentType ?? '') || IMAGE_NAME.test(file.path);
    return {
      thumbnail: image ? this.deps.webview.asWebviewUri(vscode.Uri.file(file.path)).toString() : null,
      bytes: file.bytes,
    };
  }

  /** Every output found saved in the output folder since the last look; each newly found one is told (`onSaved`). */
  async rescan(): Promise<void> {
    for (const output of this.deps.job()?.outputs ?? []) {
      if (this.saved.has(output.id)) continue;
      const found = await savedOutputPath(output, this.deps.outputDir, this.deps.jobId);
      if (found) {
        this.saved.set(output.id, found);
        this.deps.onSaved(output.id);
      }
    }
  }

  /** One look at the folder after a burst of events (a download writes a partial file, then renames it). */
  scheduleRescan(): void {
    if (this.rescanTimer) return;
    this.rescanTimer = setTimeout(() => {
      this.rescanTimer = undefined;
      const before = this.saved.size;
      void this.rescan().then(() => {
        if (this.saved.size !== before) this.deps.onFound();
      });
    }, 200);
  }

  /**
   * The file of an output in the job's output folder, downloaded first (a fresh GET: its link may have expired) unless
   * already there. @throws Error when the job does not list the output (the id comes from the page); as the download.
   */
  async file(outputId: string): Promise<string> {
    await this.rescan();
    const known = this.saved.get(outputId);
    if (known) return known.path;
    if (!this.deps.job()?.outputs.some((o) => o.id === outputId))
      throw new Error(vscode.l10n.t('the job has no such output'));
    const file = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: vscode.l10n.t('Comfy Cloud: downloading output') },
      () =>
        this.deps.jobs.service.use(async (lease) => {
          const done = await downloadJobOutput(
            lease.backend,
            this.deps.jobId,
            outputId,
            await this.deps.makeOutputDir(),
            lease.signal,
          );
          if (done === undefined) throw new Error(vscode.l10n.t('the server no longer lists this output'));
          return done;
        }),
    );
    this.saved.set(outputId, { path: file, bytes: (await fs.stat(file)).size });
    this.deps.onSaved(outputId);
    return file;
  }

  /** Every output not saved here yet, into the job's output folder. Returns the files. */
  async all(): Promise<string[]> {
    const files: string[] = [];
    for (const output of this.deps.job()?.outputs ?? []) files.push(await this.file(output.id));
    return files;
  }

  dispose(): void {
    this.folderWatcher.close();
    if (this.rescanTimer) clearTimeout(this.rescanTimer);
  }
}
