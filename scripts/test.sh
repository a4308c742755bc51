#!/usr/bin/env bash
# `npm test`: starts the services the tests need when none is configured, then runs every test once.
# PostgreSQL: when neither DATABASE_URL nor PGHOST is set, a local server is installed (if missing) and started.
# tmux: the terminal tests of the CLI drive it in a real terminal; bubblewrap (bwrap): the CLI's shell tool runs
# in it. chromium: the web chat's tests drive Debian's headless Chromium with playwright-core (no browser is
# downloaded). All are installed with apt-get when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
[ -x /usr/bin/chromium ] || missing+=(chromium)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "test: installing ${missing[*]} for the tests of the CLI and the web chat" >&2
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update >&2
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >&2
fi
if [ -z "${DATABASE_URL:-}" ] && [ -z "${PGHOST:-}" ]; then
  eval "$(bash scripts/start-postgres.sh)"
fi
exec npx vitest run "$@"
