#!/usr/bin/env node
/**
 * Reports the import cycles among the sources of the workspace packages (packages/*\/src/**\/*.ts) and the
 * imports of the core (packages/agent/src) that break its folder table, and exits 1 when there is either. Every
 * relative import counts, `import type` included: a cycle of types is still a cycle between modules, and a type
 * import ties one module to another as much as a value import does (0006 §3: the core's modules form no cycle;
 * feature modules depend on the ports and the value types only). Usage: `node scripts/check-cycles.mjs [root]`,
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

/** The core's folder (relative to root) whose imports the folder table rules. */
const CORE = 'packages/agent/src';

/** The folders every feature may build on: the value types, the ports, the model call and the session log. */
const FOUNDATION = ['kernel', 'ports', 'model', 'log'];

/** The feature folders: each depends on the foundation only, never on another feature (they meet in turn/). */
const FEATURES = ['context', 'tools', 'hooks', 'approvals', 'prompt', 'skills', 'memory', 'usage', 'output'];

/**
 * The folder table of docs/architecture.md: the folders each core folder may import besides itself. `turn/` is
 * imported by `session/` alone and `session/` by the entry file alone, since nothing else is allowed them. The
 * entry file (src/index.ts, '' here) is the public face and may re-export from any folder.
 */
const FOLDER_TABLE = new Map([
  ['kernel', []],
  ['ports', ['kernel']],
  ['model', ['kernel', 'ports']],
  ['log', ['kernel', 'ports']],
  ...FEATURES.map((feature) => [feature, FOUNDATION]),
  ['turn', [...FOUNDATION, ...FEATURES]],
  ['session', [...FOUNDATION, ...FEATURES, 'turn']],
  ['storage', ['kernel', 'ports']],
  ['testing', ['kernel', 'ports', 'model', 'storage']],
]);

/** The core folder a file is in: '' for a file directly in src/, undefined outside the core. */
function coreFolderOf(file) {
  const path = relative(join(root, CORE), file).split('\\').join('/');
  if (path.startsWith('../')) return undefined;
  return path.includes('/') ? path.slice(0, path.indexOf('/')) : '';
}

/** The core's imports that the folder table forbids, as `{ from, to, folder, allowed }`. */
function folderViolations(graph) {
  const violations = [];
  for (const [file, targets] of graph) {
    const from = coreFolderOf(file);
    if (from === undefined || from === '') continue;
    const allowed = FOLDER_TABLE.get(from);
    for (const target of targets) {
      const to = coreFolderOf(target);
      if (to === undefined || to === from) continue;
      if (allowed?.includes(to)) continue;
      violations.push({ from: file, to: target, folder: from, allowed });
    }
  }
  return violations;
}

/**
 * The floors of the core at folder level: a folder stands one floor above the highest folder it imports (the
 * ground is floor 1). Measured once the table holds, which admits no loop between folders.
 */
function folderFloors(graph) {
  const imports = new Map();
  for (const [file, targets] of graph) {
    const from = coreFolderOf(file);
    if (from === undefined) continue;
    if (!imports.has(from)) imports.set(from, new Set());
    for (const target of targets) {
      const to = coreFolderOf(target);
      if (to !== undefined && to !== from) imports.get(from).add(to);
    }
  }
  const floors = new Map();
  const floorOf = (folder, seen) => {
    if (floors.has(folder)) return floors.get(folder);
    if (seen.has(folder)) return Number.NaN;
    seen.add(folder);
    const below = [...(imports.get(folder) ?? [])].map((target) => floorOf(target, seen));
    const floor = 1 + Math.max(0, ...below);
    floors.set(folder, floor);
    return floor;
  };
  for (const folder of imports.keys()) floorOf(folder, new Set());
  return floors;
}

const files = packageSources();
const graph = importGraph(files);
const cycles = findCycles(graph);
const shown = (file) => relative(root, file).split('\\').join('/');
for (const cycle of cycles) {
  console.error(`import cycle: ${[...cycle, cycle[0]].map(shown).join(' -> ')}`);
}
const violations = folderViolations(graph);
for (const { from, to, folder, allowed } of violations) {
  const rule =
    allowed === undefined
      ? `${folder}/ is not a folder of the table in scripts/check-cycles.mjs; add it there and to docs/architecture.md`
      : `${folder}/ may import ${allowed.length === 0 ? 'nothing of the core' : allowed.map((name) => `${name}/`).join(', ')}`;
  console.error(`import breaks the folder table: ${shown(from)} -> ${shown(to)} (${rule})`);
}
if (cycles.length > 0) console.error(`${cycles.length} import cycle(s) among ${files.length} source files`);
if (violations.length > 0) console.error(`${violations.length} break(s) of the core's folder table`);
if (cycles.length + violations.length > 0) process.exit(1);
console.log(`no import cycle among ${files.length} source files`);
const floors = folderFloors(graph);
if (floors.size > 0) {
  console.log(`the core's folders keep their table and stand on ${Math.max(...floors.values())} floor(s)`);
}
