#!/usr/bin/env bash
# `npm test`: starts the services the tests need when none is configured, then runs every test once.
# PostgreSQL: when neither DATABASE_URL nor PGHOST is set, a local server is installed (if missing) and started.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${DATABASE_URL:-}" ] && [ -z "${PGHOST:-}" ]; then
  eval "$(bash scripts/start-postgres.sh)"
fi
exec npx vitest run "$@"
