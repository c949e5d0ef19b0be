// A server that goes away while a job runs, inside a real VS Code extension host: the emulator (its records in a data
// folder) is stopped while a job runs (held at a node), then started again on the same port from that folder (the run
// it interrupted has failed). Meanwhile the job's row in the Jobs view says the server is unreachable and when its
// watch retries (not "running, N %" as if all were well); when the server is back, the row, the badge and the status
// bar follow the job service's state of the job in the tick it changes.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { workspaceFile, activateExtension } from './workspace';
import { until as untilEvent } from './until';
import { startEmulator } from '../../src/emulator';
import type { ComfyCloudApi } from '../../src/extension/api';
import type { JobsNode } from '../../src/extension/jobs/jobsView';
import type { SubmitResult } from '../../src/extension/workflow/submit';

/** How long a job may take to show a state here (ms): a deadline, not a wait. */
const DEADLINE_MS = 90_000; // generous: a loaded machine is slow, never a reason to fail
type Emulator = Awaited<ReturnType<typeof startEmulator>>;

suite(
  'A server away while a job runs: the Jobs row says so, and every view follows the job service in one tick',
  () => {
    let emu: Emulator | undefined;
    let extension: ComfyCloudApi;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'comfy-outage-'));

    /** A state, waited for on the events that change it (until.ts). */
    const until = <T>(
      what: string | (() => string),
      check: () => Promise<T | undefined | false> | T | undefined | false,
    ): Promise<T> =>
      untilEvent(
        what,
        [
          extension.jobsView.provider.onDidChangeTreeData,
          extension.jobs.onDidChangeJobState,
          extension.status.onDidChange,
        ],
        check,
        DEADLINE_MS,
      );

    /** The job node of `jobId` in the view now, with its tree item and group. */
    async function row(
      jobId: string,
    ): Promise<{ node: JobsNode; item: vscode.TreeItem; group: 'running' | 'recent' } | undefined> {
      const provider = extension.jobsView.provider;
      for (const group of ['running', 'recent'] as const) {
        const node = (await provider.getChildren({ kind: 'group', group })).find(
          (n) => provider.entryOf(n)?.jobId === jobId,
        );
        if (node) return { node, item: provider.getTreeItem(node), group };
      }
      return undefined;
    }

    async function useBaseUrl(baseUrl: string | undefined): Promise<void> {
      await vscode.workspace
        .getConfiguration('comfyCloud')
        .update('baseUrl', baseUrl, vscode.ConfigurationTarget.Global);
    }

    suiteSetup(async () => {
      emu = await startEmulator({ port: 0, dataDir });
      await useBaseUrl(emu.baseUrl);
      extension = await activateExtension();
      await vscode.commands.executeCommand('comfyCloud.jobs.focus');
    });

    suiteTeardown(async () => {
      await useBaseUrl(undefined);
      await emu?.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    test("the running job's row says the server is unreachable and when it retries; back, the row, the badge and the status bar change in the tick the job's state does", async () => {
      emu!.holdNodes({});
      const submitting = vscode.commands.executeCommand<SubmitResult>(
        'comfyCloud.submitWorkflow',
        workspaceFile('invert.json'),
      );
      const held = await emu!.whenHeld();
      const jobId = held.jobId;
      await until(`job ${jobId} under Running`, async () => (await row(jobId))?.group === 'running');

      // The server goes away: the job's watch fails its reads and retries.
      const port = Number(new URL(emu!.baseUrl).port);
      await emu!.close();
      emu = undefined;
      let described = '';
      const away = await until(
        () => `the row says the server is unreachable: ${described}`,
        async () => {
          const r = await row(jobId);
          described = String(r?.item.description);
          return r && /^server unreachable, retrying in \d+ s/.test(described) ? r : undefined;
        },
      );
      assert.equal(away.group, 'running', 'the job still runs as far as anyone knows');
      assert.equal(
        (away.item.iconPath as vscode.ThemeIcon).id,
        'debug-disconnect',
        'the row still spins as if all were well',
      );
      assert.match(
        String((away.item.tooltip as vscode.MarkdownString).value),
        /server unreachable \\\(.+\\\), retrying in \d+ s/,
        'the tooltip says why',
      );
      assert.match(away.item.accessibilityInformation?.label ?? '', /server unreachable/);

      // Back, from its data folder: the run it interrupted failed. At the state that says so, in that very tick, the
      // view's entry says failed; before any timer can run (setImmediate), the tree, the badge and the status bar too.
      const told: string[] = [];
      let redrawn = false;
      const ended = new Promise<void>((resolve) => {
        const sub = extension.jobs.onDidChangeJobState((state) => {
          if (state.job.id !== jobId || state.job.status !== 'failed') return;
          sub.dispose();
          told.push(`entry ${extension.jobsView.provider.entryOf(jobId)?.job?.status}`);
          const drawing = extension.jobsView.provider.onDidChangeTreeData(() => (redrawn = true));
          setImmediate(() => {
            drawing.dispose();
            told.push(`tree redrawn ${redrawn}`);
            void row(jobId).then((r) => {
              told.push(`row ${r?.group} ${String(r?.item.contextValue).split(':')[1]}`);
              told.push(`outage ${/unreachable/.test(String(r?.item.description))}`);
              told.push(
                `count ${extension.jobsView.provider.runningCount}, badge ${extension.jobsView.view.badge?.value ?? 0}, status bar ${extension.status.runningCount} ${/\$\(sync~spin\)/.test(extension.status.item.text) ? 'spinning' : 'still'}`,
              );
              resolve();
            });
          });
        });
      });
      emu = await startEmulator({ port, dataDir });
      await ended;
      assert.deepEqual(told, [
        'entry failed',
        'tree redrawn true',
        'row recent failed',
        'outage false',
        'count 0, badge 0, status bar 0 still',
      ]);
      assert.equal((await submitting)?.status, 'failed');
    });
  },
);
