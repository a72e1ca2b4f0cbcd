# Tessera's command sheet. `make run` and `make test` each install whatever is missing first.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
export PATH := $(HOME)/.cargo/bin:$(PATH)
# cargo-leptos sets this for its builds and leptos reads it at compile time; setting it for every
# cargo command keeps `cargo test` and `cargo leptos build` from invalidating each other's artifacts.
export LEPTOS_OUTPUT_NAME := tessera

.PHONY: run test setup setup-test build release build-release lint fmt test-rust test-sqlite test-postgres e2e bench bench-check load eval clean

## Build and start the app on SQLite (tessera.db here) at http://127.0.0.1:3000 with the offline model.
run: setup build
	TESSERA_SITE_ROOT=target/site $${CARGO_TARGET_DIR:-target}/debug/tessera

## The whole suite: lints, Rust tests on SQLite and PostgreSQL, then the browser tests. The site is
## built first so the binary the Rust tests start embeds it (`assets::` checks it serves it).
test: setup-test lint
	cargo leptos build --frontend-only
	TESSERA_TEST_NEEDS_SITE=1 scripts/with-postgres.sh $(MAKE) --no-print-directory test-rust
	$(MAKE) --no-print-directory bench-check
	$(MAKE) --no-print-directory e2e

setup:
	scripts/setup.sh

setup-test:
	scripts/setup.sh --test

## The debug server with its site built in. Front end first: a plain `cargo leptos build` compiles
## the server at the same time, and the server embeds whatever target/site holds at that moment.
build:
	cargo leptos build --frontend-only
	cargo leptos build --server-only

## The optimised server, its site (CSS, islands' JavaScript and wasm) built in: one file to copy to
## a server and start from any folder (README, Deploying).
release:
	cargo leptos build --release --frontend-only
	cargo leptos build --release --server-only
	@ls -l $${CARGO_TARGET_DIR:-target}/release/tessera

build-release: release

lint:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings

fmt:
	cargo fmt --all

## Rust unit, integration and doc tests; needs TEST_DATABASE_URL (scripts/with-postgres.sh sets it).
test-rust:
	cargo test --workspace

## Only the store contract suite, on one backend.
test-sqlite:
	cargo test -p tessera-store --test contract sqlite::

test-postgres:
	scripts/with-postgres.sh cargo test -p tessera-store --test contract postgres::

## Browser tests: build the site and the server, then Playwright starts the server on a free port.
e2e: build
	cd end2end && npx --no-install playwright test

bench:
	cargo bench

## Each bench measured once, unoptimised (criterion's `--test`), so the checks a bench makes of
## what it measures keep passing between the times someone records figures; timed single calls
## (`benches/support/timing.rs`) are made once. The load tools (`load`, `mcp`, `submit`) drive a
## server for a set time and are left to `make load`/`make bench`.
bench-check:
	SITES_BENCH_RUNS=1 cargo test --bench heuristic --bench orchestration --bench render --bench forms \
		--bench record_render --bench record_decode --bench page_schema --bench sites -- --test
	cargo test -p tessera-app --features ssr --bench selections -- --test

## Load test: LOAD_PEOPLE (16) people at once through GET page → POST → run resumed, LOAD_JOURNEYS
## (400) in all, against a release server on a free loopback port (a fresh SQLite file, or
## DATABASE_URL); prints throughput and latency percentiles. Bounded by LOAD_MAX_SECS (120).
load:
	scripts/load.sh

## Measure the configured model (TESSERA_MODEL and its provider settings; default the offline
## heuristic) on the scenarios in tests/quality. `make eval TRANSCRIPTS=tests/transcripts` replays
## those transcripts instead. Exits non-zero only when the evaluation itself fails.
eval:
	cargo run --quiet -- eval $(if $(TRANSCRIPTS),--transcripts $(TRANSCRIPTS))

clean:
	cargo clean
	rm -rf end2end/artifacts end2end/test-results
