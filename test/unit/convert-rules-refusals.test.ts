/**
 * UI format to API format, what is refused and how: unknown classes (named by node, class, title and path id),
 * frontend-only nodes with their fix, every unconvertible node listed, text the frontend rewrites when queued, and
 * malformed links or Reroute loops (ui_workflow_malformed).
 */
import * as assert from 'node:assert/strict';
import { find, input, nestedSubgraphs, node, output, refusal, relink, txt2img } from './convert-rules.fixtures';

describe('UI format to API format: the rules (ComfyUI_frontend graphToPrompt)', () => {
  it('a class the engine does not have is refused, naming the node, its class and title', () => {
    const g = txt2img();
    find(g.nodes, 7).type = 'T5TokenizerOptions';
    find(g.nodes, 7).title = 'Tokenizer';
    const err = refusal(g);
    assert.equal(err.code, 'workflow_not_convertible');
    assert.deepEqual(
      err.problems.map((p) => [p.nodeId, p.classType, p.title]),
      [['7', 'T5TokenizerOptions', 'Tokenizer']],
    );
    assert.match(err.problems[0]!.reason, /not among this engine's node definitions/);
    assert.match(err.problems[0]!.fix, /Install the custom node/);
  });

  it('a refused node inside a subgraph is named by its path id ("10:20:30"), as the API graph and the server name it, not by its inner id', () => {
    const err = refusal(nestedSubgraphs('NotInstalled'));
    assert.deepEqual(
      err.problems.map((p) => [p.nodeId, p.classType]),
      [['10:20:30', 'NotInstalled']],
    );
    assert.match(err.message, /^node 10:20:30 \(NotInstalled\): /m);
  });

  it("KJNodes' SetNode/GetNode (frontend-only) are refused with their fix", () => {
    const g = txt2img();
    g.nodes.push(
      node(20, 'SetNode', ['CLIP'], [input('CLIP', 'CLIP', 30)], [output('*', '*')], { title: 'Set_CLIP' }),
      node(21, 'GetNode', ['CLIP'], [], [output('CLIP', 'CLIP', [2, 3])], { title: 'Get_CLIP' }),
    );
    g.links.push([30, 4, 1, 20, 0, 'CLIP']);
    relink(g, 2, 21, 0);
    relink(g, 3, 21, 0);
    const err = refusal(g);
    assert.deepEqual(
      err.problems.map((p) => [p.nodeId, p.classType]),
      [
        ['20', 'SetNode'],
        ['21', 'GetNode'],
      ],
    );
    for (const p of err.problems) assert.match(p.fix, /SetNode\/GetNode pair with a direct link/);
  });

  it('every unconvertible node is listed, one line each in a readable message', () => {
    const g = txt2img();
    find(g.nodes, 6).type = 'NotInstalled';
    find(g.nodes, 3).widgets_values = [42, 'randomize', 'twenty', 8, 'euler', 'normal', 1];
    find(g.nodes, 7).widgets_values = [12];
    const err = refusal(g);
    assert.deepEqual(err.problems.map((p) => p.nodeId).sort(), ['3', '6', '7']);
    const lines = err.message.split('\n');
    assert.equal(lines[0], '3 nodes of the UI-format workflow cannot be converted to API format exactly:');
    assert.equal(lines.length, 4);
    assert.match(err.message, /^node 3 \(KSampler\): widget "steps" \(INT\) holds "twenty"/m);
    for (const p of err.problems) assert.ok(p.reason.length > 0 && p.fix.length > 0);
  });

  it('text the frontend rewrites when queued ({a|b} choices, comments in dynamic prompts; %date% in filename_prefix) is refused', () => {
    const g = txt2img();
    find(g.nodes, 6).widgets_values = ['a {red|blue} castle'];
    find(g.nodes, 9).widgets_values = ['%date:yyyy-MM-dd%/img'];
    assert.deepEqual(
      refusal(g)
        .problems.map((p) => p.nodeId)
        .sort(),
      ['6', '9'],
    );
  });

  it('a malformed links table is refused as ui_workflow_malformed', () => {
    const g = txt2img();
    (g.links as unknown[]).push(['x', 4, 0]);
    const err = refusal(g);
    assert.equal(err.code, 'ui_workflow_malformed');
    assert.match(err.message, /links\[9\] is not a link/);
    assert.equal(refusal({ nodes: 'none' }).code, 'ui_workflow_malformed');
    assert.equal(refusal([1, 2]).code, 'ui_workflow_malformed');
  });

  it('a loop of Reroutes is refused as ui_workflow_malformed, not followed forever', () => {
    const g = txt2img();
    g.nodes.push(
      node(100, 'Reroute', undefined, [input('', '*', 21)], [output('', 'MODEL', [20, 1])]),
      node(101, 'Reroute', undefined, [input('', '*', 20)], [output('', 'MODEL', [21])]),
    );
    g.links.push([20, 100, 0, 101, 0, 'MODEL'], [21, 101, 0, 100, 0, 'MODEL']);
    relink(g, 1, 100, 0);
    assert.equal(refusal(g).code, 'ui_workflow_malformed');
  });
});
