#!/usr/bin/env bash
# Runs "$@" with TEST_DATABASE_URL pointing at a PostgreSQL server.
#
# If TEST_DATABASE_URL is already set, it is used as is. Otherwise a throwaway PostgreSQL 15
# cluster is created on a free port (as the postgres user: initdb refuses root), and stopped and
# removed on exit, including on failure and Ctrl-C. If neither works, this fails loudly:
# skipping PostgreSQL needs TESSERA_SKIP_POSTGRES=1, which CI never sets.
set -euo pipefail

if [ -n "${TEST_DATABASE_URL:-}" ]; then
  echo "with-postgres: using TEST_DATABASE_URL from the environment"
  exec "$@"
fi
if [ "${TESSERA_SKIP_POSTGRES:-}" = "1" ]; then
  echo "with-postgres: TESSERA_SKIP_POSTGRES=1 — PostgreSQL tests will be SKIPPED" >&2
  exec "$@"
fi

PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}
if [ -z "$PGBIN" ] || [ ! -x "$PGBIN/initdb" ]; then
  echo "with-postgres: no PostgreSQL server binaries (initdb) found and TEST_DATABASE_URL is not set" >&2
  echo "with-postgres: install postgresql, point TEST_DATABASE_URL at a server, or set TESSERA_SKIP_POSTGRES=1" >&2
  exit 1
fi

as_postgres() {
  if [ "$(id -u)" = "0" ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

PGDIR=$(mktemp -d /tmp/tessera-pg.XXXXXX)
[ "$(id -u)" = "0" ] && chown postgres:postgres "$PGDIR"
cleanup() {
  as_postgres "$PGBIN/pg_ctl" -D "$PGDIR/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$PGDIR"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

PORT=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
as_postgres "$PGBIN/initdb" -D "$PGDIR/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync >"$PGDIR/initdb.log" 2>&1 \
  || { cat "$PGDIR/initdb.log" >&2; echo "with-postgres: initdb failed" >&2; exit 1; }
as_postgres "$PGBIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/log" -w -t 30 -o \
  "-c listen_addresses=127.0.0.1 -p $PORT -k $PGDIR -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" start >/dev/null \
  || { cat "$PGDIR/log" >&2; echo "with-postgres: the cluster did not start" >&2; exit 1; }
export TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$PORT/postgres"
echo "with-postgres: throwaway cluster on port $PORT"
"$@"
