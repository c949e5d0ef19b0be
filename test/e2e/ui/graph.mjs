// UI suite, the workflow graph beside its JSON ("Open Workflow Graph to the Side"): a 3-node and a 60-node workflow (the
// fixture graph-60.json: five API-format workflows of test/fixtures/convert side by side, ids renumbered) in light,
// dark and high contrast; a click on a node selects its JSON; the cursor in the JSON highlights its node; the banner
// on invalid JSON. Every editor it opens is closed, the JSON reverted (no dirty editor is left).
import fs from 'node:fs';
import path from 'node:path';
import { ws, page, screenshot, step, until, pointerAway } from './harness.mjs';
import { palette, pickColorTheme, gotoLineEnd, openFile, webviewPage } from './helpers.mjs';

/** The steps of the workflow graph, in order. */
export async function graphSteps() {
  const graphFrame = webviewPage;
  const graphNode = (title) => graphFrame().locator('g.graph-node', { hasText: title }).first();
  /** The graph page's background and a node box's fill: what the theme decides. */
  const graphColors = () =>
    graphFrame()
      .locator('body')
      .evaluate((b) => {
        const view = b.ownerDocument.defaultView;
        const box = b.ownerDocument.querySelector('.graph-node-box');
        return `${view.getComputedStyle(b).backgroundColor} / ${box ? view.getComputedStyle(box).fill : '-'}`;
      });
  /** Opens `file` and its graph with the editor title button; resolves once `count` nodes are drawn. */
  const openGraph = async (file, count) => {
    await palette('View: Close All Editors');
    await openFile(file);
    await page.locator('.editor-actions .action-item a[aria-label*="Open Workflow Graph to the Side"]').first().click();
    await page
      .locator('.tabs-container .tab', { hasText: `Graph: ${file}` })
      .first()
      .waitFor();
    await until(
      async () =>
        `${count} nodes drawn: ${await graphFrame()
          .locator('g.graph-node')
          .count()
          .catch(() => 0)}`,
      async () =>
        (await graphFrame()
          .locator('g.graph-node')
          .count()
          .catch(() => 0)) === count,
    );
  };
  /** Pictures of the graph in light, dark and high contrast, each once its colors followed the theme; back to the first theme. */
  const inThemes = async (name) => {
    let original = '';
    const seen = [await graphColors()];
    try {
      for (const [theme, suffix] of [
        ['Light Modern', 'light'],
        ['Dark Modern', 'dark'],
        ['Dark High Contrast', 'high-contrast'],
      ]) {
        const was = await pickColorTheme(theme);
        original ||= was;
        if (was !== theme) {
          const now = await until(
            async () => `the graph's colors did not follow ${theme}: ${await graphColors().catch(() => null)}`,
            async () => {
              const c = await graphColors().catch(() => null);
              return c && !seen.includes(c) ? c : undefined;
            },
          );
          seen.push(now);
        }
        console.log(`     ${theme}: ${await graphColors()}`);
        await pointerAway(600, 700);
        await screenshot(`${name}-${suffix}`);
      }
    } finally {
      console.log(`     back to: ${original}`);
      if (original) await pickColorTheme(original).catch(() => {});
    }
  };
  /** The editor's selection as the status bar tells it (`Ln 7, Col 3 (120 selected)`). */
  const selectionStatus = () =>
    page
      .locator('.statusbar-item#status\\.editor\\.selection')
      .first()
      .innerText()
      .catch(() => '');

  await step(
    'graph: "Open Workflow Graph to the Side" shows a 3-node workflow beside its JSON, in light, dark and high contrast',
    async () => {
      await openGraph('invert.json', 3);
      await inThemes('graph-3-nodes');
    },
  );

  await step(
    'graph: a UI-format workflow keeps its saved positions, its note and its groups, each tinted with its saved colour mixed into the theme (a colour that is not a plain hex one unused), in light, dark and high contrast',
    async () => {
      const ui = JSON.parse(fs.readFileSync(path.join(ws, 'ui-convert.json'), 'utf8'));
      ui.groups = [
        { title: 'Make the image', bounding: [20, 20, 620, 210], color: '#3f789e', font_size: 24 },
        { title: 'Save', bounding: [740, 20, 355, 350], color: '#8A8', font_size: 24 },
        { title: 'Odd colour', bounding: [20, 240, 340, 130], color: 'url(javascript:alert(1))', font_size: 24 },
      ];
      fs.writeFileSync(path.join(ws, 'ui-groups.json'), JSON.stringify(ui, null, 2) + '\n');
      await openGraph('ui-groups.json', 5);
      const groups = await graphFrame()
        .locator('g.graph-group')
        .evaluateAll((gs) =>
          gs.map((g) => ({
            title: g.querySelector('text')?.textContent,
            coloured: g.classList.contains('coloured'),
            fill: g.ownerDocument.defaultView.getComputedStyle(g.querySelector('rect')).fill,
          })),
        );
      console.log(`     groups: ${JSON.stringify(groups)}`);
      const byTitle = Object.fromEntries(groups.map((g) => [g.title, g]));
      if (!byTitle['Make the image']?.coloured || !byTitle.Save?.coloured || byTitle['Odd colour']?.coloured !== false)
        throw new Error(`the groups are not tinted as saved: ${JSON.stringify(groups)}`);
      if (byTitle['Make the image'].fill === byTitle.Save.fill)
        throw new Error('two groups of different colours are drawn alike');
      await inThemes('graph-ui-groups');
    },
  );

  await step(
    'graph: a 60-node workflow beside its JSON, laid out, with its minimap, in light, dark and high contrast',
    async () => {
      await openGraph('graph-60.json', 60);
      await graphFrame().locator('.graph-minimap').waitFor();
      await inThemes('graph-60-nodes');
    },
  );

  /**
   * What is wrong with the sockets drawn (empty when nothing): a socket's dot outside its node's box (ComfyUI draws
   * its slots inside the node; dots on the box's sides made every pan and zoom frame's compositing about four times as
   * long), a link that does not start at an output's dot or end at an input's (graph units).
   */
  const socketsMisplaced = (links) =>
    graphFrame()
      .locator('svg.graph-drawing')
      .evaluate((drawing, links) => {
        const wrong = [];
        const outs = new Set();
        const ins = new Set();
        const key = (x, y) => `${Math.round(x)},${Math.round(y)}`;
        for (const g of drawing.querySelectorAll('g.graph-node')) {
          const at = /translate\(\s*(-?[\d.e+-]+)[ ,]+(-?[\d.e+-]+)\s*\)/.exec(g.getAttribute('transform') ?? '');
          const box = g.querySelector('rect.graph-node-box');
          if (!at || !box) continue;
          const width = +box.getAttribute('width');
          const height = +box.getAttribute('height');
          for (const dot of g.querySelectorAll('circle.graph-socket')) {
            const cx = +dot.getAttribute('cx');
            const cy = +dot.getAttribute('cy');
            const r = +dot.getAttribute('r') + 1;
            if (cx - r < 0 || cx + r > width || cy - r < 0 || cy + r > height)
              wrong.push(`node ${g.dataset.id}: a socket at ${cx},${cy} outside its ${width} x ${height} box`);
            (cx < width / 2 ? ins : outs).add(key(+at[1] + cx, +at[2] + cy));
          }
        }
        for (const path of links ? drawing.querySelectorAll('path.graph-edge') : []) {
          for (const sub of (path.getAttribute('d') ?? '').split('M').filter(Boolean)) {
            const n = sub
              .split(/[^\d.e+-]+/)
              .filter(Boolean)
              .map(Number);
            const start = key(n[0], n[1]);
            const end = key(n[n.length - 2], n[n.length - 1]);
            if (!outs.has(start)) wrong.push(`a link starts at ${start}, on no output socket`);
            if (!ins.has(end)) wrong.push(`a link ends at ${end}, on no input socket`);
          }
        }
        return wrong;
      }, links);

  await step(
    'graph: a Stable Diffusion API workflow and a 60-node UI-format workflow open readable in a half-width panel (node titles at least the editor font, sockets and links), in light, dark and high contrast',
    async () => {
      /** The drawn size (px) of the node titles in view: the font size times the zoom. */
      const titlePx = () =>
        graphFrame()
          .locator('text.graph-node-title')
          .first()
          .evaluate((t) => t.getBoundingClientRect().height);
      for (const [file, count, name] of [
        ['stable-diffusion.json', 7, 'graph-sd15'],
        ['ui-60.json', 60, 'graph-ui-60'],
      ]) {
        await openGraph(file, count);
        const px = await titlePx();
        const sockets = await graphFrame().locator('.graph-socket').count();
        const links = await graphFrame().locator('path.graph-edge').count();
        console.log(`     ${file}: title ${px.toFixed(1)} px high, ${sockets} sockets, ${links} links`);
        if (px < 12) throw new Error(`${file}: node titles drawn ${px} px high: not readable`);
        if (sockets === 0) throw new Error(`${file}: no sockets drawn`);
        // A saved UI-format box can be shorter than its sockets' rows: a link to a socket not drawn ends at the box's
        // bottom, so links are checked on the API-format graph, whose boxes fit their rows.
        const misplaced = await socketsMisplaced(count === 7);
        if (misplaced.length > 0) throw new Error(`${file}: ${misplaced.slice(0, 5).join('; ')}`);
        await inThemes(name);
      }
    },
  );

  await step(
    "graph: the 60-node workflow is laid out in layers along the panel's longer side: no two nodes overlap, every link's target is beyond its source",
    async () => {
      // The page lays an API-format graph out itself (dagre, layered left to right, or top to bottom in a panel taller
      // than wide): without that call every node would sit at one spot. Read where the page put each node (its box's
      // translate and size), against the file's links.
      await openGraph('graph-60.json', 60);
      const boxes = await graphFrame()
        .locator('g.graph-node')
        .evaluateAll((gs) =>
          Object.fromEntries(
            gs.map((g) => {
              const at = /translate\(\s*(-?[\d.e+-]+)[ ,]+(-?[\d.e+-]+)\s*\)/.exec(g.getAttribute('transform') ?? '');
              const box = g.querySelector('rect.graph-node-box');
              return [
                g.getAttribute('data-id'),
                at && box
                  ? {
                      x: +at[1],
                      y: +at[2],
                      w: +(box.getAttribute('width') ?? 0),
                      h: +(box.getAttribute('height') ?? 0),
                    }
                  : null,
              ];
            }),
          ),
        );
      const ids = Object.keys(boxes);
      const unplaced = ids.filter(
        (id) =>
          !boxes[id] ||
          ![boxes[id].x, boxes[id].y, boxes[id].w, boxes[id].h].every(Number.isFinite) ||
          boxes[id].w <= 0,
      );
      if (unplaced.length > 0) throw new Error(`nodes without a position or size: ${unplaced.join(', ')}`);
      const overlaps = [];
      for (let i = 0; i < ids.length; i++) {
        for (let j = i + 1; j < ids.length; j++) {
          const [a, b] = [boxes[ids[i]], boxes[ids[j]]];
          if (a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h)
            overlaps.push(`${ids[i]}/${ids[j]}`);
        }
      }
      if (overlaps.length > 0)
        throw new Error(
          `${overlaps.length} pairs of nodes overlap, e.g. ${overlaps.slice(0, 5).join(', ')}: ${JSON.stringify(boxes[ids[0]])}`,
        );
      const workflow = JSON.parse(fs.readFileSync(path.join(ws, 'graph-60.json'), 'utf8'));
      const links = Object.entries(workflow).flatMap(([to, node]) =>
        Object.values(node.inputs ?? {})
          .filter(
            (v) => Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && v[0] in workflow && v[0] !== to,
          )
          .map((v) => [v[0], to]),
      );
      if (links.length < 59) throw new Error(`the fixture has only ${links.length} links: it proves little`);
      const canvas = await graphFrame().locator('.graph-canvas').boundingBox();
      const down = canvas.height > canvas.width;
      const beyond = (f, t) => (down ? boxes[f].y + boxes[f].h <= boxes[t].y : boxes[f].x + boxes[f].w <= boxes[t].x);
      const backwards = links.filter(([from, to]) => !beyond(from, to));
      if (backwards.length > 0)
        throw new Error(
          `links whose target is not ${down ? 'below' : 'right of'} their source: ${backwards
            .slice(0, 5)
            .map(([f, t]) => `${f} (x ${boxes[f].x}) → ${t} (x ${boxes[t].x})`)
            .join(', ')}`,
        );
      const layers = new Set(ids.map((id) => (down ? boxes[id].y : boxes[id].x))).size;
      console.log(
        `     ${ids.length} nodes in ${layers} layers, ${links.length} links all ${down ? 'top to bottom' : 'left to right'} (canvas ${Math.round(canvas.width)}×${Math.round(canvas.height)}), no overlap`,
      );
      await pointerAway(600, 700);
      await screenshot('graph-60-nodes-layout');
    },
  );

  await step('graph: clicking a node selects its JSON in the editor', async () => {
    await openGraph('invert.json', 3);
    await graphNode('Invert').click();
    // The editor's selection, read from the status bar's item, or (when the graph keeps the focus and the workbench
    // hides that item) from the selection the JSON editor draws.
    const selectedInEditor = () =>
      page
        .locator('.editor-instance .monaco-editor .selected-text')
        .count()
        .catch(() => 0);
    const status = await until(
      async () => `the JSON of node 2 selected: ${await selectionStatus()}`,
      async () => {
        const text = await selectionStatus();
        if (/Ln 7, Col 3 \(\d+ selected\)|\(\d+ selected\)/.test(text)) return text;
        return (await selectedInEditor()) > 0 ? `${await selectedInEditor()} selected lines drawn` : undefined;
      },
    );
    console.log(`     status bar: ${status}`);
    await until('node 2 highlighted', async () =>
      /\bselected\b/.test((await graphNode('Invert').getAttribute('class')) ?? ''),
    );
    await pointerAway(600, 700);
    await screenshot('graph-click-selects-json');
  });

  await step('graph: moving the cursor in the JSON highlights the node under it', async () => {
    await page.locator('.editor-instance .monaco-editor .view-lines').first().click();
    await gotoLineEnd(13, 3);
    await until(
      async () => `node 3 highlighted: ${await graphNode('Save').getAttribute('class')}`,
      async () => /\bselected\b/.test((await graphNode('Save').getAttribute('class')) ?? ''),
    );
    if (/\bselected\b/.test((await graphNode('Invert').getAttribute('class')) ?? ''))
      throw new Error('node 2 is still highlighted');
    await pointerAway(600, 700);
    await screenshot('graph-cursor-highlights-node');
  });

  await step('graph: invalid JSON keeps the graph under a banner saying where', async () => {
    const invertOnDisk = fs.readFileSync(path.join(ws, 'invert.json'), 'utf8');
    try {
      await gotoLineEnd(10);
      await page.keyboard.type(',,');
      const banner = graphFrame().locator('.graph-banner');
      await until(
        async () => `the banner: ${await banner.innerText().catch(() => '')}`,
        async () => /line 10, column \d+/.test(await banner.innerText().catch(() => '')),
      );
      console.log(`     banner: ${await banner.innerText()}`);
      if ((await graphFrame().locator('g.graph-node').count()) !== 3) throw new Error('the graph was not kept');
      await pointerAway(600, 700);
      await screenshot('graph-invalid-json-banner');
    } finally {
      // The commas taken out by undo, in the editor (no focus change: code-server saves a changed file after a delay,
      // and on a focus change, so a revert through the palette can save the commas first and keep them).
      await page.locator('.editor-instance .monaco-editor .view-lines').first().click();
      await page.keyboard.press('Control+Z');
    }
    await until('the banner gone once the JSON is valid again', async () => {
      if (await graphFrame().locator('.graph-banner').isHidden()) return true;
      await page.keyboard.press('Control+Z'); // the two commas, had they been taken as two edits
      return false;
    });
    await until(
      'no modified editor left (saved as it was)',
      async () => (await page.locator('.tabs-container .tab.dirty').count()) === 0,
    );
    await palette('View: Close All Editors');
    // No editor holds the file now: what a later step opens is the fixture as it was, whatever was saved meanwhile.
    if (fs.readFileSync(path.join(ws, 'invert.json'), 'utf8') !== invertOnDisk) {
      console.log('     invert.json was left changed on disk: written back');
      fs.writeFileSync(path.join(ws, 'invert.json'), invertOnDisk);
    }
  });
}
