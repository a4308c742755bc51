import { expect, test } from 'vitest';
import { tenantFolderName } from '../src/runtime/tenant-workspaces.js';

test('a tenant folder name is one safe path segment for hostile names', () => {
  const hostile = [
    '..',
    '.',
    '../alice',
    '/etc/passwd',
    'a\u0000b',
    'Ålice',
    '🙂',
    '',
    'a/b',
    'C:\\x',
    '~',
    '_',
  ];
  for (const name of hostile) {
    const folder = tenantFolderName(name);
    expect(folder).toMatch(/^[a-z0-9_~-]{1,255}$/);
    expect(folder).not.toMatch(/^\.+$/);
  }
  expect(tenantFolderName('alice')).toBe('alice');
  expect(tenantFolderName('..')).toBe('_2e_2e');
  expect(tenantFolderName('team-a')).toBe('team-a');
});

test('two names never share a folder: case, escapes and long names stay apart', () => {
  const long = 'x'.repeat(500);
  const names = [
    'alice',
    'Alice',
    'ALICE',
    '_61lice',
    'a.b',
    'a_2eb',
    'a:b',
    'a@b',
    long,
    `${long}y`,
    `${'_'.repeat(200)}`,
    'é',
    'e\u0301',
  ];
  const folders = names.map(tenantFolderName);
  expect(new Set(folders).size).toBe(names.length);
  for (const folder of folders) expect(Buffer.byteLength(folder)).toBeLessThanOrEqual(255);
});
