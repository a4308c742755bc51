import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import * as mainEntry from '../src/index.js';
import * as storageEntry from '../src/storage/index.js';

const packageRoot = fileURLToPath(new URL('../', import.meta.url));
const manifest = JSON.parse(readFileSync(`${packageRoot}package.json`, 'utf8')) as {
  exports: Record<string, Record<string, string>>;
};

/** What a storage author needs and an embedder does not: it is on `@youyou/agent/storage` only. */
const STORAGE_HELPERS = [
  'checkMemory',
  'checkPageLimit',
  'checkSessionEvent',
  'checkSessionId',
  'decodeSessionCursor',
  'decodeStoredValue',
  'encodeSessionCursor',
  'encodeStoredValue',
  'messageTextOf',
  'searchWordsOf',
  'sessionTitleOf',
];

describe('the entry points of @youyou/agent', () => {
  test('the storage helpers are on the storage entry, not on the main one', () => {
    expect(Object.keys(storageEntry).sort()).toEqual(STORAGE_HELPERS);
    for (const name of STORAGE_HELPERS) expect(Object.keys(mainEntry)).not.toContain(name);
    // What an embedder uses stays on the main entry.
    expect(Object.keys(mainEntry)).toEqual(
      expect.arrayContaining([
        'AgentBuilder',
        'InMemorySessionStorage',
        'InMemoryMemoryStorage',
        'AgentError',
      ]),
    );
  });

  test('every export names its types first and maps to a source file the build compiles', () => {
    expect(Object.keys(manifest.exports)).toEqual(['.', './storage', './testing']);
    for (const [subpath, targets] of Object.entries(manifest.exports)) {
      expect(Object.keys(targets), subpath).toEqual(['types', 'import']);
      const { types, import: code } = targets as { types: string; import: string };
      expect(types.replace(/\.d\.ts$/, ''), subpath).toBe(code.replace(/\.js$/, ''));
      // tsconfig.build.json compiles src/ to dist/ file for file.
      const source = code.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts');
      expect(existsSync(`${packageRoot}${source}`), `${subpath} → ${source}`).toBe(true);
    }
  });
});
