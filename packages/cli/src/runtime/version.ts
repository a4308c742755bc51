import { readFileSync } from 'node:fs';

/** The version of this package, from its package.json (two folders above this file, in src/ and in dist/). */
export function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version?: string;
  };
  return manifest.version ?? '0.0.0';
}
