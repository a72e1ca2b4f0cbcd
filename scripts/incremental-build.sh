#!/usr/bin/env bash
# How long `cargo build --bin tessera` takes after a one-line edit to a handler
# (src/http/pages.rs) and to a store query (store/src/pages.rs), on this checkout and, given
# BASE, on that commit in a worktree beside it: same machine, same target directory, rounds
# alternating so that load falls on both alike. BENCHMARKS.md, "Incremental builds".
#
#   scripts/incremental-build.sh [BASE] [ROUNDS] [EDITS]   (2 rounds, 2 edits of each kind)
#
# Each edit changes one string literal and is undone after the build; the build that undoes it
# is not timed. The first build in a checkout after switching rebuilds every workspace crate and
# is not timed. The first store edit after it can still rebuild more than the next ones do, so
# each visit makes EDITS edits of each kind, alternating, and prints every one.
set -euo pipefail

base=${1:-}
rounds=${2:-2}
edits=${3:-2}
here=$(git rev-parse --show-toplevel)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$here/target}
export LEPTOS_OUTPUT_NAME=${LEPTOS_OUTPUT_NAME:-tessera}

handler_file=src/http/pages.rs
handler_from='"The request it belonged to is no longer waiting'
handler_to='"The request it belonged to is no more waiting'
store_file=store/src/pages.rs
store_from="WHERE id = \$1 AND status = 'open'\""
store_to="WHERE id = \$1 AND  status = 'open'\""

build() { cargo build --bin tessera -q; }

# Times one build after replacing `from` by `to` in `file`, then restores the file.
timed_edit() {
    local file=$1 from=$2 to=$3
    if ! grep -qF -- "$from" "$file"; then
        echo "$file no longer holds the text this script edits: update the script" >&2
        exit 1
    fi
    FROM=$from TO=$to perl -0pi -e 's/\Q$ENV{FROM}\E/$ENV{TO}/' "$file"
    local start end
    start=$(date +%s.%N)
    build
    end=$(date +%s.%N)
    git checkout -q -- "$file"
    build
    echo "$end - $start" | bc
}

measure() {
    local checkout=$1 label=$2
    (
        cd "$checkout"
        # Both checkouts' workspace crates build to the same file names (cargo hashes a path
        # package by its path inside the workspace), and cargo judges them fresh by their
        # sources' times: touched, every workspace crate is rebuilt from this checkout.
        git ls-files -z '*.rs' | xargs -0 touch
        build
        for edit in $(seq "$edits"); do
            printf '%s handler %s: %s s\n' "$label" "$edit" "$(timed_edit "$handler_file" "$handler_from" "$handler_to")"
            printf '%s store   %s: %s s\n' "$label" "$edit" "$(timed_edit "$store_file" "$store_from" "$store_to")"
        done
    )
}

worktree=""
if [ -n "$base" ]; then
    worktree=$(mktemp -d "${TMPDIR:-/tmp}/tessera-base.XXXXXX")
    git -C "$here" worktree add -q --detach "$worktree" "$base"
    trap 'git -C "$here" worktree remove --force "$worktree"' EXIT
fi
for round in $(seq "$rounds"); do
    echo "round $round"
    if [ -n "$worktree" ]; then measure "$worktree" "base $(git -C "$worktree" rev-parse --short HEAD)"; fi
    measure "$here" "head $(git -C "$here" rev-parse --short HEAD)"
done
