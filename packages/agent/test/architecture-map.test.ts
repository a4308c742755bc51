/**
 * docs/architecture.md maps every file of the core: each folder's row in "The core's folders" names exactly the
 * files the folder holds, so a file added, moved or removed without its row fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const repository = fileURLToPath(new URL('../../../', import.meta.url));
const sources = `${repository}packages/agent/src/`;

/** The rows of the core's folder table: folder (or `index.ts`) → the `.ts` files its row names. */
function mappedFiles(): Map<string, string[]> {
  const page = readFileSync(`${repository}docs/architecture.md`, 'utf8');
  const section = page.slice(page.indexOf("## The core's folders"), page.indexOf('## Adapter packages'));
  const rows = new Map<string, string[]>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    const folder = /^`([^`]+)`$/.exec(cells[1] ?? '')?.[1];
    if (folder === undefined) continue;
    const named = [...(cells[3] ?? '').matchAll(/`([\w-]+\.ts)`/g)].map((match) => match[1] ?? '');
    rows.set(folder, [...new Set(named)].sort());
  }
  return rows;
}

test("the architecture page's folder table names every file of the core, in its folder", () => {
  const rows = mappedFiles();
  const entries = readdirSync(sources, { withFileTypes: true });
  const folders = entries.filter((entry) => entry.isDirectory()).map((entry) => `${entry.name}/`);
  const topFiles = entries.filter((entry) => entry.isFile()).map((entry) => entry.name);
  expect([...rows.keys()].sort()).toEqual([...folders, ...topFiles].sort());
  for (const folder of folders) {
    const files = readdirSync(`${sources}${folder}`).filter((name) => name.endsWith('.ts'));
    expect({ folder, files: rows.get(folder) }).toEqual({ folder, files: files.sort() });
  }
});
