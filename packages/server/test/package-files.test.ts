import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, test } from 'vitest';
import { WEB_CHAT_FOLDER } from '../src/index.js';

const run = promisify(execFile);
const PACKAGE = fileURLToPath(new URL('..', import.meta.url));

test('the published package holds the web chat page that webChat: true serves', async () => {
  // What `npm publish` would pack (nothing is written), so an installed @youyou/server (and youyou serve) has it.
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: PACKAGE });
  const packed = (JSON.parse(stdout) as { files: { path: string }[] }[])[0]?.files.map((file) => file.path);
  const page = await readdir(WEB_CHAT_FOLDER);
  expect(page).toEqual(expect.arrayContaining(['index.html', 'chat.js', 'style.css']));
  for (const name of page) expect(packed).toContain(`web-chat/${name}`);
}, 60_000);
