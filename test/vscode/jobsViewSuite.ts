// The Jobs view suites' shared set-up (not a suite itself: index.ts loads only *.test.js): an emulator started here,
// the extension activated against it with the Jobs view shown, and the view's groups, children and visibility read
// through the tree provider, each wait on the events that change it with a deadline (until.ts).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { startEmulator } from '../../src/emulator';
import type { ComfyCloudApi } from '../../src/extension/api';
import type { JobsNode } from '../../src/extension/jobs/jobsView';
import { until as untilEvent } from './until';
import { activateExtension, workspaceFile } from './workspace';

/** How long a job may take to show a state here (ms): a deadline, not a wait. */
export const DEADLINE_MS = 90_000; // generous: a loaded machine is slow, never a reason to fail
export type Emulator = Awaited<ReturnType<typeof startEmulator>>;

/** A job node of a group, with its tree item and job id. */
export type JobRow = { node: JobsNode; item: vscode.TreeItem; jobId: string | undefined };

/** What useJobsViewSuite gives a suite; `emu` and `extension` are set once its suiteSetup ran. */
export interface JobsViewSuite {
  readonly emu: Emulator;
  readonly extension: ComfyCloudApi;
  /** A state, waited for on the events that change it (until.ts). */
  until<T>(what: string, check: () => Promise<T | undefined>): Promise<T>;
  /** The job nodes of a group, with their tree items. */
  group(name: 'running' | 'recent'): Promise<JobRow[]>;
  /**
   * The server accepts the remembered pending submission `key` (invert.json, that Idempotency-Key), its record gets
   * the job id as the submitter writes it, and the job is followed to its end. Returns the job id.
   */
  acceptPending(key: string): Promise<string>;
  /** A group's jobs as `<id> <description>` lines, for a failure's message. */
  shown(name: 'running' | 'recent'): Promise<string[]>;
  /** Resolves when the Jobs view's visibility becomes `visible` (at once if it is), rejects at the deadline. */
  visibility(visible: boolean): Promise<void>;
  /** The children of a job node, with their tree items. */
  childrenOf(node: JobsNode): Promise<{ node: JobsNode; item: vscode.TreeItem }[]>;
  /** Submits a workspace file and resolves with the job's node under Recent once it ended as `status`. */
  finished(file: vscode.Uri, status?: string): Promise<JobRow>;
}

/**
 * Registers, in the calling suite, a suiteSetup that starts an emulator, points comfyCloud.baseUrl at it, activates
 * the extension and shows the Jobs view; and a suiteTeardown that closes the editors, clears the setting and closes
 * the emulator.
 */
export function useJobsViewSuite(): JobsViewSuite {
  let emu: Emulator;
  let extension: ComfyCloudApi;

  /** A state, waited for on the events that change it (until.ts). */
  const until = <T>(what: string, check: () => Promise<T | undefined>): Promise<T> =>
    untilEvent(
      what,
      [extension.jobsView.provider.onDidChangeTreeData, extension.jobs.onDidChangeJob],
      check,
      DEADLINE_MS,
    );

  /** The job nodes of a group, with their tree items. */
  async function group(
    name: 'running' | 'recent',
  ): Promise<{ node: JobsNode; item: vscode.TreeItem; jobId: string | undefined }[]> {
    const provider = extension.jobsView.provider;
    // A group node by value: the root is empty while there is no job (the welcome content shows then).
    const nodes = await provider.getChildren({ kind: 'group', group: name });
    return nodes.map((node) => ({ node, item: provider.getTreeItem(node), jobId: provider.entryOf(node)?.jobId }));
  }

  /**
   * The server accepts the remembered pending submission `key` (invert.json, that Idempotency-Key), its record gets
   * the job id as the submitter writes it, and the job is followed to its end. Returns the job id.
   */
  async function acceptPending(key: string): Promise<string> {
    const workflow = JSON.parse(fs.readFileSync(workspaceFile('invert.json').fsPath, 'utf8')) as unknown;
    const res = await fetch(`${emu.baseUrl}/api/v2/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ workflow }),
    });
    const { id } = (await res.json()) as { id: string };
    await extension.jobs.store.update(key, { state: 'created', jobId: id });
    const follow = extension.jobs.service.follow(id);
    try {
      await follow.done;
    } finally {
      follow.dispose();
    }
    return id;
  }

  /** A group's jobs as `<id> <description>` lines, for a failure's message. */
  async function shown(name: 'running' | 'recent'): Promise<string[]> {
    return (await group(name)).map((j) => `${j.jobId ?? '(no id)'} ${String(j.item.description ?? '')}`);
  }

  suiteSetup(async () => {
    // No node delay: a test that looks at a running job holds it at a node (emu.holdNodes), looks, then lets it go.
    emu = await startEmulator({ port: 0 });
    await vscode.workspace
      .getConfiguration('comfyCloud')
      .update('baseUrl', emu.baseUrl, vscode.ConfigurationTarget.Global);
    extension = await activateExtension();
    assert.ok(extension?.jobsView, 'activate() did not return the extension with its jobsView');
    // Show the view, as a user clicking the activity-bar icon would: a hidden view is never refreshed.
    await vscode.commands.executeCommand('comfyCloud.jobs.focus');
  });

  suiteTeardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.workspace
      .getConfiguration('comfyCloud')
      .update('baseUrl', undefined, vscode.ConfigurationTarget.Global);
    await emu?.close();
  });

  /** Resolves when the Jobs view's visibility becomes `visible` (at once if it is), rejects at the deadline. */
  function visibility(visible: boolean): Promise<void> {
    const view = extension.jobsView.view;
    if (view.visible === visible) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => (
          sub.dispose(),
          reject(new Error(`the Jobs view's visibility did not become ${visible} within ${DEADLINE_MS} ms`))
        ),
        DEADLINE_MS,
      );
      const sub = view.onDidChangeVisibility((e) => {
        if (e.visible !== visible) return;
        clearTimeout(timer);
        sub.dispose();
        resolve();
      });
    });
  }

  /** The children of a job node, with their tree items. */
  async function childrenOf(node: JobsNode): Promise<{ node: JobsNode; item: vscode.TreeItem }[]> {
    const provider = extension.jobsView.provider;
    return (await provider.getChildren(node)).map((child) => ({ node: child, item: provider.getTreeItem(child) }));
  }

  /** Submits a workspace file and resolves with the job's node under Recent once it ended as `status`. */
  async function finished(
    file: vscode.Uri,
    status = 'succeeded',
  ): Promise<{ node: JobsNode; item: vscode.TreeItem; jobId: string | undefined }> {
    const result = await vscode.commands.executeCommand<{ jobId?: string; status: string }>(
      'comfyCloud.submitWorkflow',
      file,
    );
    assert.equal(result?.status, status, JSON.stringify(result));
    return until(`job ${result.jobId} under Recent as ${status}`, async () =>
      (await group('recent')).find(
        (j) => j.jobId === result.jobId && new RegExp(`^job:${status}:`).test(String(j.item.contextValue)),
      ),
    );
  }

  return {
    get emu() {
      return emu;
    },
    get extension() {
      return extension;
    },
    until,
    group,
    acceptPending,
    shown,
    visibility,
    childrenOf,
    finished,
  };
}
