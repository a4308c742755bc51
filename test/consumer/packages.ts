import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPOSITORY } from '../../scripts/build-package.mjs';

/** One public workspace package: its name, its folder under packages/ and the specifiers of its entry points. */
export interface PublicPackage {
  name: string;
  folder: string;
  entryPoints: string[];
  /** The names of the workspace packages it depends on. */
  workspaceDependencies: string[];
}

interface Manifest {
  name: string;
  private?: boolean;
  exports?: Record<string, unknown>;
  dependencies?: Record<string, string>;
}

/** The packages a dependency comes before its dependents, so each builds against its dependencies' dists. */
function inBuildOrder(packages: PublicPackage[]): PublicPackage[] {
  const ordered: PublicPackage[] = [];
  const placed = new Set<string>();
  while (ordered.length < packages.length) {
    const ready = packages.filter(
      (entry) =>
        !placed.has(entry.name) && entry.workspaceDependencies.every((dependency) => placed.has(dependency)),
    );
    if (ready.length === 0) throw new Error('the workspace packages depend on each other in a cycle');
    for (const entry of ready) {
      ordered.push(entry);
      placed.add(entry.name);
    }
  }
  return ordered;
}

function readPublicPackages(): PublicPackage[] {
  const packages: PublicPackage[] = [];
  for (const folder of readdirSync(path.join(REPOSITORY, 'packages')).sort()) {
    const file = path.join(REPOSITORY, 'packages', folder, 'package.json');
    const manifest = JSON.parse(readFileSync(file, 'utf8')) as Manifest;
    if (manifest.private === true) continue;
    packages.push({
      name: manifest.name,
      folder,
      entryPoints: Object.keys(manifest.exports ?? {})
        .filter((key) => key !== './package.json')
        .map((key) => (key === '.' ? manifest.name : `${manifest.name}/${key.slice(2)}`)),
      workspaceDependencies: Object.keys(manifest.dependencies ?? {}).filter((name) =>
        name.startsWith('@youyou/'),
      ),
    });
  }
  const names = new Set(packages.map((entry) => entry.name));
  for (const entry of packages) {
    entry.workspaceDependencies = entry.workspaceDependencies.filter((name) => names.has(name));
  }
  return inBuildOrder(packages);
}

/** Every package under packages/ that is not private, dependencies first. */
export const PUBLIC_PACKAGES: readonly PublicPackage[] = readPublicPackages();

/** The first `ts` block under a README's "## Quick start" heading, or undefined when it has none. */
export function quickStart(readme: string): string | undefined {
  const section = readme.split(/^## Quick start$/m)[1]?.split(/^## /m)[0];
  return section === undefined ? undefined : /```ts\n([\s\S]*?)```/.exec(section)?.[1];
}

/**
 * The README's embedding example as a module of its own: the first `ts` block under "## Embedding the
 * runtime", preceded by the `myProvider` it leaves to the reader (a scripted model answering "It is noon.").
 */
export function readmeExample(readme: string): string {
  const section = readme.split(/^## Embedding the runtime$/m)[1];
  const block = section === undefined ? undefined : /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (block === undefined) throw new Error('README.md has no ts block under "## Embedding the runtime"');
  return [
    "import { ScriptedModelProvider, scriptedModel } from '@youyou/agent/testing';",
    'const myProvider = new ScriptedModelProvider({',
    "  models: [scriptedModel({ id: 'my-model' })],",
    "  responses: [[{ type: 'text', text: 'It is noon.' }]],",
    '});',
    block,
  ].join('\n');
}
