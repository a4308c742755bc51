import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { NO_RULES } from '../src/approval/rules.js';
import { type Key, LineEditor } from '../src/chat/line-editor.js';
import { attachMentions, completeMention, type MentionScope } from '../src/modes/interactive/mentions.js';
import { createReadFileTool } from '../src/tools/read-file.js';
import { openWorkspace } from '../src/tools/workspace.js';

/** The keys node's decoder gives for typed text: one per character, CR as return. */
function typed(text: string): Key[] {
  return Array.from(text, (character) =>
    character === '\r' ? { name: 'return', sequence: '\r' } : { sequence: character },
  );
}

function feed(editor: LineEditor, keys: Key[]) {
  return keys.map((key) => editor.key(key)).at(-1);
}

describe('the line editor', () => {
  test('a paste is data: its CR, ESC sequences and control keys are text, and a long one is one item', () => {
    const editor = new LineEditor({ history: [], initial: '' });
    const pasted = 'one\rtwo\x1b[Athree\r\x03four\rfive\rsix\rseven';
    feed(editor, [{ name: 'paste-start' }, ...typed(pasted), { name: 'paste-end' }]);
    expect(editor.text).toBe('one\ntwo\x1b[Athree\n\x03four\nfive\nsix\nseven');
    expect(editor.view().lines).toEqual(['[pasted 6 lines]']);
    // Backspace takes the whole paste away.
    editor.key({ name: 'backspace' });
    expect(editor.text).toBe('');
  });

  test('a short paste is shown line by line, neutralised', () => {
    const editor = new LineEditor({ history: [], initial: '' });
    feed(editor, [{ name: 'paste-start' }, ...typed('a\x1b]0;x\x07\rb'), { name: 'paste-end' }]);
    expect(editor.view().lines).toEqual(['a\\e]0;x\\a', 'b']);
    expect(feed(editor, typed('\r'))).toEqual({ type: 'submit', text: 'a\x1b]0;x\x07\nb' });
  });

  test('newline keys, and the split form of CSI 27;2;13~', () => {
    const editor = new LineEditor({ history: [], initial: '' });
    feed(editor, [
      ...typed('a'),
      { sequence: '\x1b[13;2u' },
      ...typed('b'),
      { sequence: '\x1b[27;2;' },
      ...typed('13~c'),
      { name: 'return', meta: true, sequence: '\x1b\r' },
      ...typed('d\\'),
    ]);
    expect(feed(editor, typed('\r'))).toEqual({ type: 'edit' });
    expect(feed(editor, typed('e\r'))).toEqual({ type: 'submit', text: 'a\nb\nc\nd\ne' });
  });

  test('↑ and ↓ move between lines, then browse the history; the draft comes back', () => {
    const history = ['newest', 'older'];
    const editor = new LineEditor({ history, initial: 'x\ny' });
    editor.key({ name: 'up' });
    expect(editor.view().cursorLine).toBe(0);
    editor.key({ name: 'up' });
    expect(editor.text).toBe('newest');
    editor.key({ name: 'up' });
    expect(editor.text).toBe('older');
    editor.key({ name: 'down' });
    editor.key({ name: 'down' });
    expect(editor.text).toBe('x\ny');
  });
});

describe('@path mentions', () => {
  let root: string;
  let scope: MentionScope;

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'youyou-mentions-'));
    await mkdir(path.join(root, 'ws', 'src'), { recursive: true });
    const workspace = path.join(root, 'ws');
    scope = {
      root: workspace,
      hiddenPaths: [],
      rules: NO_RULES,
      tools: [createReadFileTool(openWorkspace(workspace))],
    };
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  test('a file over read_file caps is attached up to them, with read_file note of where it stopped', async () => {
    const lines = Array.from({ length: 2500 }, (_, index) => `row ${index + 1}`);
    await writeFile(path.join(scope.root, 'big.txt'), `${lines.join('\n')}\n`);
    const attached = await attachMentions(scope, 'see @big.txt.');
    expect(attached.notes).toEqual([{ path: 'big.txt', attached: true, lines: 2001 }]);
    expect(attached.text).toContain('row 2000');
    expect(attached.text).not.toContain('row 2001');
    expect(attached.text).toMatch(/\[stopped after line 2000/);
  });

  test('Tab completes inside the workspace only', async () => {
    await writeFile(path.join(scope.root, 'src', 'main.ts'), 'x');
    await writeFile(path.join(root, 'outside.txt'), 'secret');
    await symlink(path.join(root, 'outside.txt'), path.join(scope.root, 'src', 'mlink'));
    expect(completeMention(scope, '@sr')?.replacement).toBe('@src/');
    // The symlink that leads out is not offered.
    expect(completeMention(scope, '@src/m')).toEqual({ replacement: '@src/main.ts', choices: ['main.ts'] });
    expect(completeMention(scope, '@../out')).toBeUndefined();
    // Nor a path a deny rule refuses to read_file.
    await mkdir(path.join(scope.root, 'secrets'));
    await writeFile(path.join(scope.root, 'secrets', 'key.txt'), 'k');
    expect(completeMention(scope, '@secrets/')?.replacement).toBe('@secrets/key.txt');
    const denying = {
      ...scope,
      rules: {
        allow: [],
        deny: [{ tool: 'read_file', pattern: 'secrets/**', text: 'read_file(secrets/**)' }],
      },
    };
    expect(completeMention(denying, '@secrets/')).toBeUndefined();
    expect(completeMention(scope, `@${root}/out`)).toBeUndefined();
  });
});
