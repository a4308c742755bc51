#!/usr/bin/env node
/**
 * Reports the import cycles among the sources of the workspace packages (packages/*\/src/**\/*.ts) and exits 1
 * when there is one. Every relative import counts, `import type` included: a cycle of types is still a cycle
 * between modules (0006 §3: the core's modules form no cycle). Usage: `node scripts/check-cycles.mjs [root]`,
 * where root (default: the repository) holds the `packages` folder.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..'));

/** `from '…'` of import and export statements, side-effect imports, and dynamic `import('…')`. */
const SPECIFIER_PATTERNS = [
  /(?:^|[\s;}])(?:import|export)\s[^'"]*?\sfrom\s*['"](\.[^'"]+)['"]/g,
  /(?:^|[\s;}])import\s*['"](\.[^'"]+)['"]/g,
  /\bimport\s*\(\s*['"](\.[^'"]+)['"]\s*\)/g,
];

/** Every .ts file under `directory` (declaration files left out). */
function sourcesUnder(directory) {
  const files = [];
  for (const name of readdirSync(directory).sort()) {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) files.push(...sourcesUnder(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) files.push(path);
  }
  return files;
}

/** The sources of every package, in a stable order. */
function packageSources() {
  const packages = join(root, 'packages');
  if (!existsSync(packages)) return [];
  const files = [];
  for (const name of readdirSync(packages).sort()) {
    const src = join(packages, name, 'src');
    if (existsSync(src) && statSync(src).isDirectory()) files.push(...sourcesUnder(src));
  }
  return files;
}

/** The source file a relative specifier names, if it is one of `known`. */
function resolveSpecifier(from, specifier, known) {
  const target = resolve(dirname(from), specifier);
  const candidates = [
    target.replace(/\.js$/, '.ts'),
    target.replace(/\.mjs$/, '.mts'),
    target,
    `${target}.ts`,
    join(target, 'index.ts'),
  ];
  return candidates.find((candidate) => known.has(candidate));
}

/** Each file's relative imports among the package sources, in the order they appear. */
function importGraph(files) {
  const known = new Set(files);
  const graph = new Map();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const targets = new Set();
    for (const pattern of SPECIFIER_PATTERNS) {
      for (const match of text.matchAll(pattern)) {
        const target = resolveSpecifier(file, match[1], known);
        if (target !== undefined) targets.add(target);
      }
    }
    graph.set(file, [...targets]);
  }
  return graph;
}

/**
 * The cycles a depth-first walk meets: one per edge that leads back to a file still on the walk's path, as the
 * path from that file back to itself. Each cycle is reported once, whichever file it is entered from.
 */
function findCycles(graph) {
  const state = new Map();
  const path = [];
  const cycles = new Map();
  const visit = (file) => {
    state.set(file, 'open');
    path.push(file);
    for (const target of graph.get(file) ?? []) {
      const targetState = state.get(target);
      if (targetState === undefined) visit(target);
      else if (targetState === 'open') {
        const cycle = path.slice(path.indexOf(target));
        // The same cycle entered from another file is a rotation of this one: keyed by its smallest file.
        const start = cycle.indexOf([...cycle].sort()[0]);
        const rotated = [...cycle.slice(start), ...cycle.slice(0, start)];
        cycles.set(rotated.join('\0'), rotated);
      }
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return [...cycles.values()];
}

const files = packageSources();
const cycles = findCycles(importGraph(files));
const shown = (file) => relative(root, file).split('\\').join('/');
for (const cycle of cycles) {
  console.error(`import cycle: ${[...cycle, cycle[0]].map(shown).join(' -> ')}`);
}
if (cycles.length > 0) {
  console.error(`${cycles.length} import cycle(s) among ${files.length} source files`);
  process.exit(1);
}
console.log(`no import cycle among ${files.length} source files`);
