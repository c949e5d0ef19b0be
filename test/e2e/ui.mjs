// UI test of the installed extension in a real VS Code workbench (code-server), driven with playwright-core in
// Debian's chromium: open the sample, run "Comfy Cloud: Submit Workflow" from the command palette, watch the
// progress notification, the success notification, "Open Output" opening the PNG; and a UI-format file being
// refused without a request. Screenshots of every step go to test-results/. Ends with `ui: N passed, N failed`.
//
// Run it against a plain code-server (NOT started with enable-smoke-test-driver: that hides notification toasts)
// that has the .vsix installed:
//   CS_URL=http://127.0.0.1:PORT CS_USER_DATA=<its --user-data-dir> node test/e2e/ui.mjs
// env: CS_URL, CS_USER_DATA (required: the emulator's URL is written into its settings), WS_DIR (folder to open;
//      default: a fresh copy of test/fixtures/workspace), RESULTS (default test-results), NODE_DELAY_MS (emulator
//      delay per node, default 0), STEP_TIMEOUT_MS (how long a step waits for any one condition, default 60000),
//      EXT_DEV_PATH (load the extension from this folder instead of the installed one; needs the smoke-test flag),
//      UI_STEPS (a regular expression: only the steps whose names match run, after the first)
//
// No step depends on the machine's speed. A step that looks at a running job holds it at a node through the
// emulator's control endpoint (emulator.mjs, src/emulator/holds.ts), looks, then releases it; every other wait is
// on an observable condition (an element, a request at the emulator, the window title after a settings write)
// with a generous deadline, never a fixed pause.
//
// The steps live in test/e2e/ui/, one module per feature area, run here in order (each area's steps in their order);
// ui/harness.mjs sets the stage when imported (emulator, settings, browser) and counts the steps; ui/helpers.mjs holds
// what the steps do as a person would.
import { finish } from './ui/harness.mjs';
import { submitSteps } from './ui/submit.mjs';
import { assetSteps } from './ui/assets.mjs';
import { jobsViewSteps } from './ui/jobs-view.mjs';
import { firstRunSteps } from './ui/first-run.mjs';
import { localEmulatorSteps } from './ui/local-emulator.mjs';
import { monitorSteps } from './ui/monitor.mjs';
import { monitorGraphSteps } from './ui/monitor-graph.mjs';
import { monitorWindowSteps } from './ui/monitor-window.mjs';
import { routerSteps } from './ui/router.mjs';
import { intellisenseSteps } from './ui/intellisense.mjs';
import { uiFormatSteps } from './ui/ui-format.mjs';
import { v1Steps } from './ui/v1.mjs';
import { graphSteps } from './ui/graph.mjs';
import { graphFormSteps } from './ui/graph-form.mjs';
import { batchSteps } from './ui/batches.mjs';
import { comfyuiSteps } from './ui/comfyui.mjs';

const t0 = Date.now();
await submitSteps();
await assetSteps();
await jobsViewSteps();
await firstRunSteps();
await localEmulatorSteps();
// The monitor's first steps hand its later ones the job they monitored and the CSP violations seen from then on.
const monitored = await monitorSteps();
await monitorGraphSteps();
await monitorWindowSteps(monitored);
await routerSteps();
await intellisenseSteps();
await uiFormatSteps();
await v1Steps();
await graphSteps();
await graphFormSteps();
await batchSteps();
await comfyuiSteps();
await finish(t0);
