// UI suite, assets: upload from the Explorer's context menu, the Assets view shows it; the same file again says no
// bytes were sent.
import fs from 'node:fs';
import path from 'node:path';
import { emu, ws, page, screenshot, step, toast, settled, pointerAway } from './harness.mjs';
import { clearNotifications, explorerMenu, showComfySidebar } from './helpers.mjs';

const assetFile = 'upload-me.png';
const assetUploads = (from) =>
  emu.requests.slice(from).filter((r) => r.method === 'POST' && /\/api\/v2\/assets(\?|$)/.test(r.url));

/** The steps of assets, in order. */
export async function assetSteps() {
  await step(
    'right-click a file in the Explorer → "Upload to Comfy Cloud": uploaded, and the Assets view shows it',
    async () => {
      await clearNotifications();
      // A 1×1 PNG with a random tail: bytes no server has seen.
      const png = Buffer.from(
        'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC',
        'base64',
      );
      fs.writeFileSync(path.join(ws, assetFile), Buffer.concat([png, Buffer.from(String(Date.now()))]));
      const from = emu.requests.length;
      await explorerMenu(assetFile, 'Upload to Comfy Cloud');
      await toast(/uploaded upload-me\.png \(\d+ B\)/).waitFor();
      if (assetUploads(from).length !== 1)
        throw new Error(`expected one multipart upload, saw ${JSON.stringify(emu.requests.slice(from))}`);
      await showComfySidebar();
      const row = page.locator('.pane-body .monaco-list-row', { hasText: assetFile }).first();
      await row.waitFor();
      const text = (await row.innerText()).replace(/\s+/g, ' ');
      if (!/image\/png · [0-9a-f]{12}/.test(text))
        throw new Error(`the Assets row does not show type and short hash: ${text}`);
      console.log(`     assets: ${text}`);
      await pointerAway();
      await screenshot('assets-view');
    },
  );

  await step('uploading the same file again says it is already there: no bytes sent (none sent)', async () => {
    await clearNotifications();
    const from = emu.requests.length;
    await explorerMenu(assetFile, 'Upload to Comfy Cloud');
    const said = toast(/upload-me\.png is already there: no bytes sent/);
    await said.waitFor();
    if (assetUploads(from).length !== 0)
      throw new Error(`bytes were sent again: ${JSON.stringify(emu.requests.slice(from))}`);
    await showComfySidebar();
    const row = page.locator('.pane-body .monaco-list-row', { hasText: /already there: no bytes sent/ }).first();
    await row.waitFor();
    // Its tooltip (hash, size, "Upload: already there") in the picture too, when the hover shows in time (for the
    // picture only).
    await row.hover();
    await page
      .locator('.monaco-hover', { hasText: 'Asset id' })
      .first()
      .waitFor({ timeout: 10000 })
      .catch(() => {});
    await settled();
    await screenshot('assets-dedup');
  });
}
