#!/usr/bin/env bash
# Starts a local PostgreSQL for the tests of @youyou/postgres and prints the line that points them at it:
#
#   eval "$(scripts/start-postgres.sh)"      # sets DATABASE_URL in the calling shell
#
# Installs the Debian `postgresql` package when no server is installed, starts the first cluster (creating
# one if there is none), waits until it accepts connections, then creates the test role and database if they
# are missing. Idempotent: running it again on a started server only prints the line again. Everything but
# the `export DATABASE_URL=...` line goes to stderr. Runs as root (or as a user with sudo).
#
# Settings (environment): YOUYOU_PG_USER (default youyou), YOUYOU_PG_PASSWORD (default youyou),
# YOUYOU_PG_DATABASE (default youyou_test), YOUYOU_PG_WAIT_SECONDS (default 60).
set -euo pipefail

DB_USER=${YOUYOU_PG_USER:-youyou}
DB_PASSWORD=${YOUYOU_PG_PASSWORD:-youyou}
DB_NAME=${YOUYOU_PG_DATABASE:-youyou_test}
WAIT_SECONDS=${YOUYOU_PG_WAIT_SECONDS:-60}

log() { echo "start-postgres: $*" >&2; }
fail() {
  log "error: $*"
  exit 1
}

# Runs a command as root: directly when we are root, else through sudo.
as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# Runs a command as the postgres superuser (peer authentication over the local socket).
as_postgres() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  elif [ "$(id -un)" = postgres ]; then
    "$@"
  else
    sudo -u postgres "$@"
  fi
}

# The names are put into SQL by psql's own quoting (:'var', %I, %L); still, refuse anything odd early.
[[ $DB_USER =~ ^[a-z_][a-z0-9_]{0,62}$ ]] || fail "YOUYOU_PG_USER must be a lower-case identifier"
[[ $DB_NAME =~ ^[a-z_][a-z0-9_]{0,62}$ ]] || fail "YOUYOU_PG_DATABASE must be a lower-case identifier"
[[ $DB_PASSWORD =~ ^[A-Za-z0-9_.~-]+$ ]] || fail "YOUYOU_PG_PASSWORD may hold only letters, digits and _ . ~ -"

server_installed() {
  command -v pg_ctlcluster >/dev/null 2>&1 && compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null
}

if ! server_installed; then
  log "no PostgreSQL server found: installing the Debian postgresql package"
  as_root apt-get update >&2
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql >&2
  server_installed || fail "the postgresql package did not install a server"
fi

# The first cluster pg_lsclusters lists: "version name port status owner datadir logfile".
cluster_line() { pg_lsclusters --no-header 2>/dev/null | head -n 1; }

if [ -z "$(cluster_line)" ]; then
  version=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
  log "no cluster found: creating cluster $version/main"
  as_root pg_createcluster "$version" main >&2
fi

read -r VERSION CLUSTER PORT STATUS _ <<<"$(cluster_line)"
if [ "$STATUS" != online ]; then
  log "starting cluster $VERSION/$CLUSTER on port $PORT"
  # pg_ctlcluster works without systemd (containers); `service` is the fallback for other setups.
  as_root pg_ctlcluster "$VERSION" "$CLUSTER" start >&2 || as_root service postgresql start >&2
fi

log "waiting for 127.0.0.1:$PORT to accept connections (at most ${WAIT_SECONDS}s)"
deadline=$((SECONDS + WAIT_SECONDS))
until pg_isready -q -h 127.0.0.1 -p "$PORT"; do
  [ "$SECONDS" -lt "$deadline" ] || fail "PostgreSQL did not accept connections within ${WAIT_SECONDS}s (see /var/log/postgresql/)"
  sleep 0.5
done

log "creating role $DB_USER and database $DB_NAME if missing"
# psql runs from /tmp so that runuser does not complain about an unreadable working directory.
(cd /tmp && as_postgres psql -X -q -v ON_ERROR_STOP=1 -p "$PORT" \
  -v user="$DB_USER" -v password="$DB_PASSWORD" -v db="$DB_NAME" >&2) <<'SQL'
SELECT format('CREATE ROLE %I LOGIN PASSWORD %L', :'user', :'password')
 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'user') \gexec
-- Keeps the password in step with the settings when the role already existed.
SELECT format('ALTER ROLE %I LOGIN PASSWORD %L', :'user', :'password') \gexec
SELECT format('CREATE DATABASE %I OWNER %I', :'db', :'user')
 WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = :'db') \gexec
SQL

# pg_trgm makes substring search use an index; @youyou/postgres works without it, so a missing contrib
# package is only a note.
if ! (cd /tmp && as_postgres psql -X -q -v ON_ERROR_STOP=1 -p "$PORT" -d "$DB_NAME" \
  -c 'CREATE EXTENSION IF NOT EXISTS pg_trgm' >&2 2>/dev/null); then
  log "note: the pg_trgm extension is not available; substring search runs without a trigram index"
fi

echo "export DATABASE_URL=postgres://$DB_USER:$DB_PASSWORD@127.0.0.1:$PORT/$DB_NAME"
