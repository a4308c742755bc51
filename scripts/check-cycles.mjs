#!/usr/bin/env node
/**
 * Reports the import cycles among the sources of the workspace packages (packages/*\/src/**\/*.ts) and the
 * imports that break the folder tables of the core (packages/agent/src), the CLI (packages/cli/src) and the
 * server (packages/server/src), and exits 1 when there is either. Every relative import counts, `import type`
 * included: a cycle of types is still a cycle between modules, and a type import ties one module to another as
 * much as a value import does (0006 §3: the core's modules form no cycle; feature modules depend on the ports
 * and the value types only). Usage: `node scripts/check-cycles.mjs [root]`, where root (default: the
 * repository) holds the `packages` folder.
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

/** The folders every feature of the core may build on: the value types, the ports, the model call and the log. */
const FOUNDATION = ['kernel', 'ports', 'model', 'log'];

/** The core's feature folders: each depends on the foundation only, never on another feature (they meet in turn/). */
const FEATURES = ['context', 'tools', 'hooks', 'approvals', 'prompt', 'skills', 'memory', 'usage', 'output'];

/** The CLI's folders below its modes, from the ground up. */
const CLI_BELOW_MODES = ['text', 'approval', 'sandbox', 'config', 'tools', 'chat', 'runtime', 'sessions'];

/**
 * The folder tables of docs/architecture.md, one per package that has one: the folders each folder may import
 * besides itself. A file directly in src/ ('' here) is the package's face and may import any folder.
 *
 * The core: `turn/` is imported by `session/` alone and `session/` by the entry file alone, since nothing else
 * is allowed them.
 *
 * The CLI: each way in is one mode (`modes/NAME.ts` or `modes/NAME/`), and no mode imports another; what two
 * modes share lives in a folder below them. The server: HTTP plumbing, the sessions it holds, the route groups.
 */
const TABLES = [
  {
    name: "the core's",
    whole: 'the core',
    src: 'packages/agent/src',
    folders: new Map([
      ['kernel', []],
      ['ports', ['kernel']],
      ['model', ['kernel', 'ports']],
      ['log', ['kernel', 'ports']],
      ...FEATURES.map((feature) => [feature, FOUNDATION]),
      ['turn', [...FOUNDATION, ...FEATURES]],
      ['session', [...FOUNDATION, ...FEATURES, 'turn']],
      ['storage', ['kernel', 'ports']],
      ['testing', ['kernel', 'ports', 'model', 'storage']],
    ]),
  },
  {
    name: "the CLI's",
    whole: 'the CLI',
    src: 'packages/cli/src',
    folders: new Map([
      ['text', []],
      ['approval', []],
      ['sandbox', ['text']],
      ['config', ['text', 'approval', 'sandbox']],
      ['tools', ['text', 'sandbox']],
      ['chat', ['text', 'approval', 'config']],
      ['runtime', ['text', 'approval', 'sandbox', 'config', 'tools']],
      ['sessions', ['text', 'approval', 'config', 'chat', 'runtime']],
      ['modes/*', CLI_BELOW_MODES],
    ]),
    /** A mode is a file or a folder of modes/: `modes/print.ts` is the mode `modes/print`. */
    unitOf: (path) => {
      const parts = path.split('/');
      if (parts[0] !== 'modes' || parts.length < 2) return parts.length === 1 ? '' : parts[0];
      return `modes/${(parts[1] ?? '').replace(/\.ts$/, '')}`;
    },
    ruleOf: (unit) => (unit.startsWith('modes/') ? 'modes/*' : unit),
  },
  {
    name: "the server's",
    whole: 'the server',
    src: 'packages/server/src',
    folders: new Map([
      ['http', []],
      ['sessions', ['http']],
      ['routes', ['http', 'sessions']],
    ]),
  },
];

/** The table whose package holds `file`, with the folder (unit) of the file in it; undefined outside them all. */
function placeOf(file) {
  for (const table of TABLES) {
    const path = relative(join(root, table.src), file).split('\\').join('/');
    if (path.startsWith('../')) continue;
    const unit = table.unitOf?.(path) ?? (path.includes('/') ? path.slice(0, path.indexOf('/')) : '');
    return { table, unit };
  }
  return undefined;
}

/** The rule (table key) of a unit: the unit itself, or the pattern that stands for it (`modes/*`). */
function ruleOf(table, unit) {
  return table.ruleOf?.(unit) ?? unit;
}

/** The imports that a folder table forbids, as `{ from, to, folder, allowed }`. */
function folderViolations(graph) {
  const violations = [];
  for (const [file, targets] of graph) {
    const from = placeOf(file);
    if (from === undefined || from.unit === '') continue;
    const allowed = from.table.folders.get(ruleOf(from.table, from.unit));
    for (const target of targets) {
      const to = placeOf(target);
      if (to === undefined || to.table !== from.table || to.unit === from.unit) continue;
      if (allowed?.includes(to.unit)) continue;
      violations.push({ from: file, to: target, folder: from.unit, allowed, table: from.table });
    }
  }
  return violations;
}

/**
 * The floors of a package at folder level: a folder stands one floor above the highest folder it imports (the
 * ground is floor 1). Measured once the table holds, which admits no loop between folders.
 */
function folderFloors(graph, table) {
  const imports = new Map();
  for (const [file, targets] of graph) {
    const from = placeOf(file);
    if (from?.table !== table) continue;
    if (!imports.has(from.unit)) imports.set(from.unit, new Set());
    for (const target of targets) {
      const to = placeOf(target);
      if (to?.table === table && to.unit !== from.unit) imports.get(from.unit).add(to.unit);
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
for (const { from, to, folder, allowed, table } of violations) {
  const rule =
    allowed === undefined
      ? `${folder}/ is not a folder of the table in scripts/check-cycles.mjs; add it there and to docs/architecture.md`
      : `${folder}/ may import ${allowed.length === 0 ? `nothing of ${table.whole}` : allowed.map((name) => `${name}/`).join(', ')}`;
  console.error(`import breaks the folder table: ${shown(from)} -> ${shown(to)} (${rule})`);
}
if (cycles.length > 0) console.error(`${cycles.length} import cycle(s) among ${files.length} source files`);
if (violations.length > 0) console.error(`${violations.length} break(s) of a package's folder table`);
if (cycles.length + violations.length > 0) process.exit(1);
console.log(`no import cycle among ${files.length} source files`);
for (const table of TABLES) {
  const floors = folderFloors(graph, table);
  if (floors.size > 0) {
    console.log(
      `${table.name} folders keep their table and stand on ${Math.max(...floors.values())} floor(s)`,
    );
  }
}
