#!/usr/bin/env bash
# `make load`: starts a release server on a free loopback port — on a fresh SQLite file, or on
# DATABASE_URL when it is set — drives it with benches/load.rs (N people: GET page → POST →
# run resumed), prints throughput and latency percentiles, and stops the server.
# LOAD_PEOPLE, LOAD_JOURNEYS and LOAD_MAX_SECS pass through (see benches/load.rs).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET=${CARGO_TARGET_DIR:-target}
WORK=$(mktemp -d /tmp/tessera-load.XXXXXX)
SERVER=""
cleanup() {
  if [ -n "$SERVER" ]; then kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cargo build --release --quiet --bin tessera
cargo bench --no-run --quiet --bench load

: > "$WORK/tessera.toml"  # no settings file: only the environment above counts
PORT=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
URL="http://127.0.0.1:$PORT"
export TESSERA_API_TOKEN="load-$(python3 -c 'import secrets;print(secrets.token_hex(16))')"
export TESSERA_WEBHOOK_SECRET="$(python3 -c 'import secrets;print(secrets.token_hex(32))')"
# The bench's callback sink listens on a loopback port it picks later: admit loopback callbacks.
export TESSERA_OUTBOUND_ALLOW=127.0.0.1
DATABASE=${DATABASE_URL:-sqlite://$WORK/tessera.db}
echo "load: server on $URL over ${DATABASE%%://*}"

TESSERA_ADDR="127.0.0.1:$PORT" TESSERA_PUBLIC_URL="$URL" DATABASE_URL="$DATABASE" \
  TESSERA_ADMIN_PASSWORD="$TESSERA_API_TOKEN-admin" TESSERA_LOG="${TESSERA_LOG:-warn}" TESSERA_CONFIG="$WORK/tessera.toml" \
  "$TARGET/release/tessera" > "$WORK/server.log" 2>&1 &
SERVER=$!
for _ in $(seq 1 300); do
  if curl -fsS "$URL/readyz" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$SERVER" 2>/dev/null; then cat "$WORK/server.log" >&2; exit 1; fi
  sleep 0.1
done
curl -fsS "$URL/readyz" >/dev/null

LOAD_URL="$URL" cargo bench --quiet --bench load
