/** A keybinding for Submit Workflow on JSON editors — contributed, on a contributed command, JSON only. */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../..', 'package.json'), 'utf8'));

describe('manifest: keybindings', () => {
  it('Submit Workflow has a keybinding, active only in a focused JSON editor, and every keybinding names a contributed command', () => {
    const bindings = pkg.contributes.keybindings as { command: string; key: string; mac?: string; when?: string }[];
    const commands = new Set((pkg.contributes.commands as { command: string }[]).map((c) => c.command));
    for (const b of bindings) assert.ok(commands.has(b.command), `${b.command} is not contributed`);
    const submit = bindings.find((b) => b.command === 'comfyCloud.submitWorkflow');
    assert.ok(submit, 'no keybinding for Submit Workflow');
    assert.match(submit.when ?? '', /editorTextFocus/);
    assert.match(submit.when ?? '', /editorLangId == json\b/);
    assert.ok(submit.mac, 'no macOS key');
  });
});
