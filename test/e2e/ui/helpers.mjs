// What the steps of the UI suite do as a person would in the workbench: the command palette and Quick Open, context
// menus, the Explorer, the Comfy Cloud sidebar and its views, the editor's completion, notifications; and what they
// look up: the job a submission made (at the emulator), a loaded image, a webview's page, a workflow to submit.
import { emu, page, toasts, until } from './harness.mjs';

/**
 * Chooses `item` (an entry of an open context menu) as a person would with pointer and keyboard: hovers it until the
 * menu shows it focused, then presses Enter, and waits for the menu to close. (A click that lands while the menu still
 * lays out only highlights the entry; a focused entry and Enter always choose it.)
 */
export async function chooseMenuEntry(item) {
  const menu = page.locator('.monaco-menu').first();
  await until('the menu entry focused under the pointer', async () => {
    await item.hover();
    return (await item.getAttribute('class'))?.split(/\s+/).includes('focused');
  });
  await page.keyboard.press('Enter');
  await menu.waitFor({ state: 'detached' });
}

/** Opens the workspace file `file` through Quick Open (Ctrl+P) and waits for its editor. */
export async function quickOpen(file) {
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible' });
  await input.fill(file);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: file }).first().waitFor();
  await page.keyboard.press('Enter');
  await page.locator('.tabs-container .tab.active', { hasText: file }).waitFor();
  await page.locator('.monaco-editor .view-lines').first().waitFor();
}

/** Runs `command` from the command palette (F1) and waits for the palette to close. */
export async function palette(command) {
  const input = page.locator('.quick-input-widget input');
  for (let attempt = 1; ; attempt++) {
    try {
      await page.keyboard.press('F1');
      await input.waitFor({ state: 'visible', timeout: 20000 });
      await input.fill('>' + command, { timeout: 10000 });
      const row = page.locator('.quick-input-list .monaco-list-row', { hasText: command }).first();
      await row.waitFor({ timeout: 20000 });
      await page.keyboard.press('Enter');
      break;
    } catch (err) {
      // The quick input closes when something takes the focus between the key and the typing (a webview that just
      // opened, a notification): it is opened again, a bounded number of times.
      if (attempt >= 3) throw err;
      console.log(`     palette "${command}" again (${String(err.message ?? err).split('\n')[0]})`);
      await page.keyboard.press('Escape');
    }
  }
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
}

/**
 * Runs a palette command that asks something through a quick input of its own (palette() waits for the palette to
 * close); resolves once the quick input shows `text` (its title, prompt or an item).
 */
export async function paletteAsking(command, text) {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible' });
  await input.fill('>' + command);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: command }).first().waitFor();
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget', { hasText: text }).waitFor();
}

/**
 * "Preferences: Color Theme", then the theme `label`, as a person picks it; resolves with the theme that was current
 * (to go back to it).
 */
export async function pickColorTheme(label) {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible' });
  await input.fill('>Preferences: Color Theme');
  // That command exactly (not "Browse Color Themes in Marketplace", which may rank first).
  const command = page
    .locator('.quick-input-list .monaco-list-row .label-name', { hasText: /^Preferences: Color Theme$/ })
    .first();
  await command.waitFor();
  await command.click();
  // The theme picker replaces the palette in the same widget: its placeholder says so.
  await page.locator('.quick-input-widget input[placeholder*="Color Theme"]').waitFor();
  // The picker opens on the current theme: its name, to go back to it.
  const current = (
    await page
      .locator('.quick-input-list .monaco-list-row.focused .label-name')
      .first()
      .innerText()
      .catch(() => '')
  ).trim();
  await input.fill(label);
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first();
  await row.waitFor();
  await row.click();
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
  return current;
}

/** Opens the walkthrough "Get Started with Comfy Cloud" (Welcome: Open Walkthrough) and returns its container. */
export async function openWalkthrough() {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible' });
  await input.fill('>Welcome: Open Walkthrough');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Open Walkthrough' }).first().waitFor();
  await page.keyboard.press('Enter');
  const choice = page
    .locator('.quick-input-list .monaco-list-row', { hasText: 'Get Started with Comfy Cloud' })
    .first();
  await choice.waitFor();
  await choice.click();
  const walkthrough = page.locator('.gettingStartedContainer', { hasText: 'Get Started with Comfy Cloud' });
  await walkthrough.waitFor();
  return walkthrough;
}

/** The active editor (the first editor instance). */
export const editor = () => page.locator('.editor-instance .monaco-editor').first();
/** The editor's suggest widget (completion list). */
export const suggest = page.locator('.editor-widget.suggest-widget');

/** Puts the cursor at the end of line `n` of the active editor (Quick Open's `:n`, then End), then `left` characters to the left. */
export async function gotoLineEnd(n, left = 0) {
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible' });
  await input.fill(`:${n}`);
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
  await page.keyboard.press('End');
  for (let i = 0; i < left; i++) await page.keyboard.press('ArrowLeft');
}

/**
 * Opens completion and returns the suggest widget's labels, once it lists a row with `text`. A request answered
 * without it (the language service still starting: "No suggestions", or other rows) is asked again, until the deadline.
 */
export async function suggestions(text) {
  const wanted = suggest.locator('.monaco-list-row', { hasText: text }).first();
  const answered = suggest
    .locator('.monaco-list-row')
    .first()
    .or(suggest.locator('.message', { hasText: /No suggestions/i }));
  await until(`a completion item ${JSON.stringify(text)}`, async () => {
    await page.keyboard.press('Control+Space');
    await answered.first().waitFor();
    if (await wanted.isVisible()) return true;
    await page.keyboard.press('Escape');
    await suggest.waitFor({ state: 'hidden' });
    return false;
  });
  return await suggest.locator('.monaco-list-row .label-name').allInnerTexts();
}

/** Takes the completion `label`, filtered by typing `typed` first, as a person would. */
export async function acceptSuggestion(typed, label) {
  await page.keyboard.type(typed);
  await suggest.locator('.monaco-list-row.focused', { hasText: label }).waitFor();
  await page.keyboard.press('Enter');
}

/** "Notifications: Clear All Notifications", then waits until no toast is left. */
export async function clearNotifications() {
  await palette('Notifications: Clear All Notifications').catch(() => page.keyboard.press('Escape'));
  // Every step clears them once its jobs ended: then no toast is left (a running job's progress one would stay).
  await toasts
    .locator('.notification-toast')
    .first()
    .waitFor({ state: 'detached' })
    .catch(() => console.log('     (a notification is still shown after Clear All)'));
}

/**
 * The id of the job submitted since request `from` (the submission's answer names it; the extension's next request of
 * the job, its event stream or a GET, carries it in the URL).
 */
export function submittedJobId(from) {
  return until(
    () =>
      `no request named the submitted job: ${JSON.stringify(emu.requests.slice(from).map((r) => `${r.method} ${r.url}`))}`,
    () => {
      for (const r of emu.requests.slice(from)) {
        const m = /\/api\/v2\/jobs\/([^/?]+)/.exec(r.url);
        if (m) return decodeURIComponent(m[1]);
      }
      return undefined;
    },
  );
}

/** Waits until the <img> `img` (a locator) has loaded a picture; resolves with its natural [width, height]. */
export async function loadedImage(img) {
  await img.waitFor({ state: 'attached' });
  return until('the image loaded', async () => {
    const [width, height, complete] = await img.evaluate((el) => [el.naturalWidth, el.naturalHeight, el.complete]);
    return complete && width > 0 ? [width, height] : undefined;
  });
}

/** An API-format workflow: EmptyImage (64×64, `color`), `inverts` ImageInverts in a chain, then SaveImage `prefix`. */
export function invertChain(inverts, prefix, color = 255) {
  const workflow = { 1: { class_type: 'EmptyImage', inputs: { width: 64, height: 64, batch_size: 1, color } } };
  for (let i = 2; i <= inverts + 1; i++)
    workflow[i] = { class_type: 'ImageInvert', inputs: { image: [String(i - 1), 0] } };
  workflow[inverts + 2] = {
    class_type: 'SaveImage',
    inputs: { images: [String(inverts + 1), 0], filename_prefix: prefix },
  };
  return workflow;
}

/**
 * `row` in the Explorer, shown: the Explorer draws only the rows in view, so once the earlier steps' output folders
 * push a file below them, the folders are collapsed (once) to bring it back into view.
 */
export async function explorerRow(row) {
  await palette('View: Show Explorer');
  try {
    await row.waitFor({ timeout: 5000 });
  } catch {
    // A file just written may not be seen yet (the server's file watcher can lag on a busy machine): read the folder
    // again, as a user would with the Explorer's Refresh.
    await palette('Collapse Folders in Explorer');
    await palette('Refresh Explorer');
    await row.waitFor();
  }
  return row;
}
/** The Explorer's context menu on `name`, then its entry `entry`. */
export async function explorerMenu(name, entry) {
  const row = await explorerRow(page.locator('.explorer-folders-view .monaco-list-row', { hasText: name }).first());
  await row.click({ button: 'right' });
  const item = page.locator('.monaco-menu .action-item', { hasText: entry }).first();
  await item.waitFor();
  await chooseMenuEntry(item);
}
/** Opens a workspace file from the Explorer (Quick Open's file index can miss a file just written). */
export async function openFile(name) {
  const exact = new RegExp(`^\\s*${name.replace(/\./g, '\\.')}\\s*$`);
  const row = await explorerRow(page.locator('.explorer-folders-view .monaco-list-row', { hasText: exact }).first());
  await row.click();
  await page.locator('.tabs-container .tab.active', { hasText: exact }).waitFor();
  await page.locator('.monaco-editor .view-lines').first().waitFor();
}
/**
 * Expands the Comfy Cloud views named in `open` and collapses its others (Jobs, Assets, Models), so the ones open get
 * the sidebar's height (a tree draws only the rows in view); resolves with a function that puts them back as they were.
 */
export async function onlyViews(...open) {
  const changed = [];
  for (const name of ['Jobs', 'Assets', 'Models']) {
    const header = page.locator('.part.sidebar .pane-header', { hasText: new RegExp(`^\\s*${name}`) }).first();
    if (((await header.getAttribute('aria-expanded')) === 'true') !== open.includes(name)) {
      await header.click();
      changed.push(header);
    }
  }
  return async () => {
    for (const header of changed) await header.click();
  };
}
/** Opens the Comfy Cloud sidebar (from the Explorer, so the icon's click opens it rather than closing it). */
export async function showComfySidebar() {
  await palette('View: Show Explorer');
  await page.locator('.activitybar .action-item a[aria-label^="Comfy Cloud"]').first().click();
}

/** The page of the last webview opened (its outer iframe, then its content frame): the monitor, the graph, a sheet. */
export const webviewPage = () => page.frameLocator('iframe.webview.ready').last().frameLocator('iframe#active-frame');
