#!/usr/bin/env node
/**
 * Lists the exports of a package's sources that no other file of the repository imports: helpers exported
 * though only their own file uses them. An export counts as used when its name appears in an import or
 * re-export of any other tracked file (tests, examples and benchmarks included), or as `ns.name` in a file
 * that imports its module as a namespace or dynamically. The entry points' names are the public face and are
 * never listed: the files an entry re-exports with `export *` are left out whole. Names are matched by name
 * alone, so a name exported by two modules counts as used for both: the list errs towards keeping exports.
 *
 * Usage: `node scripts/unused-exports.mjs [--fix] [--root DIR] [src folder]`: the repository at DIR (default
 * this one), the sources below `src folder` (default packages/agent/src, whose entries are index.ts,
 * storage/index.ts and testing/index.ts). Prints `file:line name` per export; `--fix` removes the `export`
 * keyword of each. Exits 1 when it listed any and did not fix them.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

let root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
let folder = 'packages/agent/src';
let fix = false;
const args = process.argv.slice(2);
for (let index = 0; index < args.length; index += 1) {
  if (args[index] === '--fix') fix = true;
  else if (args[index] === '--root') root = resolve(args[++index] ?? '.');
  else folder = args[index];
}
const source = resolve(root, folder);
const ENTRIES = ['index.ts', 'storage/index.ts', 'testing/index.ts'].map((entry) => join(source, entry));

const CODE = /\.(?:ts|tsx|mts|cts|js|mjs|cjs|html)$/;

/** Every file below `directory`, node_modules and dist left out (for a folder that is no git checkout). */
function filesUnder(directory) {
  const files = [];
  for (const name of readdirSync(directory).sort()) {
    if (name === 'node_modules' || name === 'dist' || name === '.git') continue;
    const path = join(directory, name);
    if (statSync(path).isDirectory()) files.push(...filesUnder(path));
    else files.push(relative(root, path));
  }
  return files;
}

/** The repository's files that hold code: in a git checkout, the tracked ones and those not ignored. */
function codeFiles() {
  let listed;
  try {
    listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).split('\n');
  } catch {
    listed = filesUnder(root);
  }
  return [...new Set(listed)].filter((file) => CODE.test(file)).map((file) => join(root, file));
}

const DECLARATION =
  /^export\s+(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?(?:function\*?|const|let|var|class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/gm;

/** The names a file declares with `export`, with the line each stands on. */
function declaredExports(text) {
  return [...text.matchAll(DECLARATION)].map((match) => ({
    name: match[1],
    line: text.slice(0, match.index).split('\n').length,
    index: match.index,
  }));
}

/** The names a file imports or re-exports by name: `import {…}`, `export {…} from`, destructured `import()`. */
function namedImports(text) {
  const names = new Set();
  const pattern = /(?:import|export)\s+(?:type\s+)?(?:[\w$]+\s*,\s*)?\{([^}]*)\}\s*from\s*['"][^'"]+['"]/g;
  for (const match of text.matchAll(pattern)) {
    for (const entry of match[1].split(',')) {
      const name = entry
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)[0];
      if (name !== '') names.add(name);
    }
  }
  // `const { a, b: c } = await import('…')`
  for (const match of text.matchAll(/const\s*\{([^}]*)\}\s*=\s*await\s+import\s*\(/g)) {
    for (const entry of match[1].split(',')) {
      const name = entry.trim().split(/\s*:\s*/)[0];
      if (name !== '') names.add(name);
    }
  }
  return names;
}

/** The module basenames a file imports whole: `import * as ns from '…/x.js'` and `import('…/x.js')`. */
function wholeImports(text) {
  const specifiers = [
    ...text.matchAll(/import\s+\*\s+as\s+[\w$]+\s+from\s*['"]([^'"]+)['"]/g),
    ...text.matchAll(/import\s*\(\s*['"]([^'"]+)['"]\s*\)/g),
    // A specifier held in a constant, then imported (a test that loads a module twice).
    ...text.matchAll(/const\s+[\w$]+\s*=\s*['"](\.{1,2}\/[^'"]+\.(?:js|ts)(?:\?[^'"]*)?)['"]/g),
  ];
  return new Set(
    specifiers.map((match) => basename(match[1].replace(/\?.*$/, '')).replace(/\.(?:js|ts)$/, '')),
  );
}

/** The files the entries re-export whole (`export *`, `export * as ns`), followed through further `export *`. */
function wholeReExported() {
  const files = new Set();
  const pending = [...ENTRIES];
  while (pending.length > 0) {
    const file = pending.pop();
    let text;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const match of text.matchAll(/export\s+\*\s+(?:as\s+[\w$]+\s+)?from\s*['"]([^'"]+)['"]/g)) {
      const target = resolve(dirname(file), match[1]).replace(/\.js$/, '.ts');
      if (!files.has(target)) {
        files.add(target);
        pending.push(target);
      }
    }
  }
  return files;
}

const files = codeFiles();
const texts = new Map(files.map((file) => [file, readFileSync(file, 'utf8')]));
const publicWhole = wholeReExported();
const candidates = files.filter(
  (file) =>
    file.startsWith(`${source}/`) &&
    /\.tsx?$/.test(file) &&
    !ENTRIES.includes(file) &&
    !publicWhole.has(file),
);

const unused = [];
for (const file of candidates) {
  const text = texts.get(file);
  const moduleName = basename(file).replace(/\.tsx?$/, '');
  for (const declared of declaredExports(text)) {
    const usedElsewhere = files.some((other) => {
      if (other === file) return false;
      const otherText = texts.get(other);
      if (namedImports(otherText).has(declared.name)) return true;
      return wholeImports(otherText).has(moduleName) && new RegExp(`\\.${declared.name}\\b`).test(otherText);
    });
    if (!usedElsewhere) unused.push({ file, ...declared });
  }
}

for (const { file, line, name } of unused) console.log(`${relative(root, file)}:${line} ${name}`);
if (fix) {
  const byFile = new Map();
  for (const entry of unused) byFile.set(entry.file, [...(byFile.get(entry.file) ?? []), entry]);
  for (const [file, entries] of byFile) {
    let text = texts.get(file);
    for (const entry of [...entries].sort((a, b) => b.index - a.index)) {
      text = `${text.slice(0, entry.index)}${text.slice(entry.index).replace(/^export\s+/, '')}`;
    }
    writeFileSync(file, text);
  }
  console.log(`${unused.length} export keyword(s) removed in ${byFile.size} file(s)`);
} else if (unused.length > 0) {
  console.error(
    `${unused.length} export(s) used only in their own file: remove their \`export\` (or run with --fix)`,
  );
  process.exit(1);
} else {
  console.log(`every export of ${relative(root, source)} is imported by another file or is public`);
}
