/**
 * The path of a link between two sockets (media/graph/links.ts): a forward link is one curve; a link whose input is
 * not right of its output (a top-to-bottom layout) runs in the gap between its nodes, never across them.
 */
import * as assert from 'node:assert/strict';
import { linkPath, type LinkBox } from '../../media/graph/links';

/** The points a path passes through: its move, line and curve end points (control points left out). */
function points(d: string): [number, number][] {
  const out: [number, number][] = [];
  for (const m of d.matchAll(/([MLQC])([^MLQC]*)/g)) {
    const nums = m[2]!.split(/[ ,]+/).filter(Boolean).map(Number);
    out.push([nums[nums.length - 2]!, nums[nums.length - 1]!]);
  }
  return out;
}

const inside = (b: LinkBox, [x, y]: [number, number]): boolean =>
  x > b.x && x < b.x + b.width && y > b.y && y < b.y + b.height;

describe('graph links: from the output socket to the input socket', () => {
  it('a forward link (left to right) is one curve from socket to socket', () => {
    const d = linkPath(
      220,
      50,
      330,
      80,
      { x: 0, y: 0, width: 220, height: 100 },
      { x: 330, y: 40, width: 220, height: 80 },
    );
    assert.match(d, /^M220,50C\d+(\.\d+)?,50 \d+(\.\d+)?,80 330,80$/);
  });

  it('top to bottom: the link leaves right, runs in the gap between the nodes, comes in from the left, crossing neither node', () => {
    const from = { x: 0, y: 0, width: 220, height: 120 };
    const to = { x: 10, y: 200, width: 220, height: 100 };
    const d = linkPath(220, 60, 10, 250, from, to);
    const ps = points(d);
    assert.deepEqual(ps[0], [220, 60]);
    assert.deepEqual(ps[ps.length - 1], [10, 250]);
    for (const p of ps.slice(1, -1)) assert.ok(!inside(from, p) && !inside(to, p), `${p} is inside a node: ${d}`);
    // The run between them is in the gap (y 120 to 200).
    assert.ok(
      ps.some(([, y]) => y === 160),
      d,
    );
  });

  it('side by side but overlapping up and down: the run goes below both nodes', () => {
    const from = { x: 300, y: 0, width: 220, height: 120 };
    const to = { x: 0, y: 40, width: 220, height: 100 };
    const ps = points(linkPath(520, 60, 0, 80, from, to));
    assert.ok(
      ps.some(([, y]) => y > 140),
      JSON.stringify(ps),
    );
    for (const p of ps.slice(1, -1)) assert.ok(!inside(from, p) && !inside(to, p), `${p} is inside a node`);
  });
});
