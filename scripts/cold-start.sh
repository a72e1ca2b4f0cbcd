#!/usr/bin/env bash
# Size and cold start of a tessera binary: its size in MB, and the time from exec to the first
# `/readyz` 200 on a fresh SQLite file in an empty folder (no TESSERA_SITE_ROOT), RUNS times
# (default 5), with the median. Usage: scripts/cold-start.sh [BINARY] (default target/release/tessera).
set -euo pipefail

binary=$(realpath "${1:-${CARGO_TARGET_DIR:-target}/release/tessera}")
runs=${RUNS:-5}
port=${PORT:-$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')}
size=$(stat -c %s "$binary")
printf 'binary: %s\nsize: %s bytes (%.1f MB)\n' "$binary" "$size" "$(echo "$size / 1000000" | bc -l)"

times=()
for run in $(seq 1 "$runs"); do
  folder=$(mktemp -d)
  start=$(date +%s%N)
  (cd "$folder" && exec env -u TESSERA_SITE_ROOT -u TESSERA_CONFIG TESSERA_ADDR="127.0.0.1:$port" \
    DATABASE_URL="sqlite://$folder/cold.db" TESSERA_API_TOKEN=cold-start-token-0123456789 \
    TESSERA_ADMIN_PASSWORD=cold-start-password TESSERA_LOG=warn "$binary" >"$folder/log" 2>&1) &
  pid=$!
  until curl -fs -o /dev/null "http://127.0.0.1:$port/readyz"; do
    if ! kill -0 "$pid" 2>/dev/null; then cat "$folder/log"; exit 1; fi
    sleep 0.005
  done
  end=$(date +%s%N)
  ms=$(( (end - start) / 1000000 ))
  times+=("$ms")
  echo "run $run: ${ms} ms to /readyz 200"
  kill -TERM "$pid"; wait "$pid" || true
  rm -rf "$folder"
done
median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
echo "median of $runs: ${median} ms"
