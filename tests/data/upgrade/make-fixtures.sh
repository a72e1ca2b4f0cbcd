#!/usr/bin/env bash
# Makes the upgrade fixtures with a Tessera binary of the previous release:
#   scripts/with-postgres.sh tests/data/upgrade/make-fixtures.sh OLD_BINARY COMMIT
# For each engine it starts OLD_BINARY on an empty database, asks twice over the API, answers the
# first ask through its page, leaves the second waiting, stops the server and saves the database
# (sqlite.db, VACUUMed; postgres.sql, pg_dump --no-owner) and what the test expects (fixture.json).
set -euo pipefail

OLD=${1:?usage: make-fixtures.sh OLD_BINARY COMMIT}
COMMIT=${2:?usage: make-fixtures.sh OLD_BINARY COMMIT}
HERE=$(cd "$(dirname "$0")" && pwd)
: "${TEST_DATABASE_URL:?run under scripts/with-postgres.sh}"
API_TOKEN=test-token-0123456789abcdef # tests/api/helpers.rs API_TOKEN
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
WORK=$(mktemp -d /tmp/tessera-upgrade.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# make_one ENGINE DATABASE_URL: prints this engine's part of fixture.json.
make_one() {
  local engine=$1 url=$2 port
  port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
  local base="http://127.0.0.1:$port"
  (cd "$WORK" && exec env -u TESSERA_CONFIG TESSERA_ADDR="127.0.0.1:$port" DATABASE_URL="$url" \
    TESSERA_API_TOKEN="$API_TOKEN" TESSERA_ADMIN_PASSWORD=upgrade-admin-password \
    TESSERA_LOG=warn "$OLD" >"$WORK/$engine.log" 2>&1) &
  local server=$!
  for _ in $(seq 300); do curl -fs "$base/readyz" >/dev/null && break; sleep 0.1; done
  curl -fs "$base/readyz" >/dev/null || { cat "$WORK/$engine.log" >&2; exit 1; }

  ask() {
    curl -fs -H "authorization: Bearer $API_TOKEN" -H 'content-type: application/json' \
      -d "{\"prompt\": \"$1\"}" "$base/api/asks"
  }
  local answered waiting
  answered=$(ask "Approve the invoice made before the upgrade?")
  waiting=$(ask "Approve the order still waiting across the upgrade?")
  local answered_path csrf
  answered_path=/p/$(jq -r '.link' <<<"$answered" | sed 's|.*/p/||')
  csrf=$(curl -fs "$base$answered_path" | grep -o 'name="_csrf" value="[^"]*"' | sed 's/.*value="//;s/"$//')
  curl -fs -o /dev/null -d "_csrf=$csrf&answer=approved+before+the+upgrade" "$base$answered_path"
  local answered_id
  answered_id=$(jq -r '.id' <<<"$answered")
  for _ in $(seq 100); do
    [ "$(curl -fs -H "authorization: Bearer $API_TOKEN" "$base/api/asks/$answered_id" | jq -r .status)" = submitted ] && break
    sleep 0.1
  done
  local answered_now metrics
  answered_now=$(curl -fs -H "authorization: Bearer $API_TOKEN" "$base/api/asks/$answered_id")
  metrics=$(curl -fs "$base/metrics" | grep -E '^tessera_(runs|pages)\{' || true)
  kill -TERM "$server"
  wait "$server" || true
  jq -n --argjson answered "$answered_now" --argjson waiting "$waiting" --arg metrics "$metrics" '{
    answered: {id: $answered.id, status: $answered.status, response: $answered.response},
    waiting: {id: $waiting.id, path: ("/p/" + ($waiting.link | sub(".*/p/"; ""))), status: $waiting.status},
    metrics: ($metrics | split("\n") | map(select(. != "")))
  }'
}

rm -f "$HERE/sqlite.db"
sqlite_part=$(make_one sqlite "sqlite://$HERE/sqlite.db")
sqlite3 "$HERE/sqlite.db" 'PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE; VACUUM;' >/dev/null
rm -f "$HERE/sqlite.db-wal" "$HERE/sqlite.db-shm" "$HERE/sqlite.db.lock"

database=tessera_upgrade_fixture
"$PGBIN/psql" -q "$TEST_DATABASE_URL" -c "DROP DATABASE IF EXISTS $database" -c "CREATE DATABASE $database"
pg_url=$(python3 -c 'import sys,urllib.parse as u;p=u.urlsplit(sys.argv[1]);print(u.urlunsplit(p._replace(path="/"+sys.argv[2])))' "$TEST_DATABASE_URL" "$database")
postgres_part=$(make_one postgres "$pg_url")
"$PGBIN/pg_dump" --no-owner --no-privileges "$pg_url" >"$HERE/postgres.sql"
"$PGBIN/psql" -q "$TEST_DATABASE_URL" -c "DROP DATABASE $database"

jq -n --arg commit "$COMMIT" --argjson sqlite "$sqlite_part" --argjson postgres "$postgres_part" \
  '{made_by: $commit, api_token: "'"$API_TOKEN"'", sqlite: $sqlite, postgres: $postgres}' >"$HERE/fixture.json"
echo "made $HERE/{sqlite.db,postgres.sql,fixture.json}"
