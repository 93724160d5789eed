# kinformer build and test entry points. `make test` is what CI runs.
GO ?= go
PKGS ?= ./...

# The integration tests run against a real etcd and kube-apiserver that
# internal/testenv/build.sh builds from the Go module proxy (about 12 minutes cold, a no-op
# once built). `make test` requires them; `make test-unit` runs everything without them
# (the integration tests then skip).
TESTENV_BUILD := internal/testenv/build.sh

.PHONY: test alloc-guards test-unit demo demo-local fmt-check vet gen-verify generate testenv build bench bench-quick bench-full bench-relist bench-watch-requests soak soak-ceiling fuzz-short

# Every recipe line runs under bash with pipefail, so that a failing command before a pipe
# (a benchmark piped into the table tool) fails the target.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec

# FUZZTIME is how long `make fuzz-short` (part of `make test`) fuzzes each target.
FUZZTIME ?= 10s

## test: gofmt check, go vet, generated code up to date, the whole suite (integration tests
## included) under the race detector, then a short run of every fuzz target.
test: fmt-check vet gen-verify
	@bin=$$($(TESTENV_BUILD)) && echo "server binaries: $$bin" && \
	KINFORMER_TESTENV_BIN=$$bin KINFORMER_REQUIRE_INTEGRATION=1 $(GO) test -race -count=1 -timeout 30m $(PKGS)
	@$(MAKE) --no-print-directory alloc-guards
	@$(MAKE) --no-print-directory fuzz-short

## alloc-guards: the allocation guards, without the race detector (which allocates on its own,
## so their files carry `//go:build !race` and the -race run above skips them). Every test of
## every such file must run and pass: a guard that matched no test fails the target.
alloc-guards:
	@files=$$(git grep -l '^//go:build !race' -- '*_test.go'); \
	if [ -z "$$files" ]; then echo "alloc-guards: no file with //go:build !race"; exit 1; fi; \
	for file in $$files; do \
		tests=$$(sed -n 's/^func \(Test[A-Za-z0-9_]*\)(.*/\1/p' "$$file"); \
		if [ -z "$$tests" ]; then echo "alloc-guards: $$file has no test"; exit 1; fi; \
		pattern="^($$(echo $$tests | tr ' ' '|'))\$$"; \
		echo "alloc guards ./$$(dirname "$$file") $$pattern (without -race)"; \
		out=$$($(GO) test -count=1 -v -run "$$pattern" "./$$(dirname "$$file")") || { echo "$$out"; exit 1; }; \
		for t in $$tests; do \
			grep -q -- "^--- PASS: $$t " <<<"$$out" || { echo "$$out"; echo "alloc-guards: $$t did not run"; exit 1; }; \
		done; \
	done

## fuzz-short: fuzz every target (each `func Fuzz...` in a _test.go file) for $(FUZZTIME), starting
## from its committed corpus in testdata/fuzz. A failing input is written to that corpus: commit
## it with the fix.
fuzz-short:
	@for file in $$(git grep -l '^func Fuzz' -- '*_test.go'); do \
		for target in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$$file"); do \
			echo "fuzz ./$$(dirname "$$file") $$target for $(FUZZTIME)"; \
			$(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) "./$$(dirname "$$file")"; \
		done; \
	done

## demo: about 20 s of a live `kubectl get pods -w`-style view on an embedded cluster (no
## cluster, no network).
demo:
	$(GO) run ./examples/podwatch --embedded --duration 20s --pods 40 --rate 8 --summary-every 5s

## demo-local: the same view for about 40 s on the project's own etcd and kube-apiserver on
## 127.0.0.1, with the workload written through the real API (builds the servers the first time).
demo-local:
	@bin=$$($(TESTENV_BUILD)) && KINFORMER_TESTENV_BIN=$$bin $(GO) run ./examples/podwatch --local-apiserver --duration 40s --pods 30 --rate 10 --summary-every 5s

## test-unit: the suite without the real API server.
test-unit: fmt-check vet gen-verify
	$(GO) test -race -count=1 $(PKGS)

## testenv: build etcd and kube-apiserver for the integration tests and print where they are.
testenv:
	@$(TESTENV_BUILD)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

## gen-verify: regenerate informers/ and listers/ into a temporary folder and fail when the
## committed files differ (or when the API drifted from client-go's).
gen-verify:
	$(GO) run ./internal/gen -verify

## generate: rewrite the generated informers/ and listers/ trees.
generate:
	$(GO) generate ./...

## bench: kinformer against client-go, side by side, at the performance issue's sizes
## (10,000/50,000 pods, 200,000 events, 20,000 pods over HTTP, 10,000 pods on the real
## kube-apiserver), 3 interleaved runs, medians in one table (under 10 minutes on 2 cores).
bench:
	@bin=$$($(TESTENV_BUILD)) && echo "server binaries: $$bin" && \
	KINFORMER_TESTENV_BIN=$$bin KINFORMER_BENCH_FULL=1 $(GO) test -run '^$$' -bench . -benchtime 1x -count 3 -timeout 30m ./internal/bench | $(GO) run ./internal/bench/cmd/benchtable -tee -machine

## bench-quick: the same at reduced sizes, without the real API server (about 2 minutes).
bench-quick:
	$(GO) test -run '^$$' -bench . -benchtime 1x -count 3 -timeout 30m ./internal/bench | $(GO) run ./internal/bench/cmd/benchtable -tee -machine

## bench-watch-requests: the watch, streaming-list and LIST requests that 20 informers send
## the real kube-apiserver over WATCH_DURATION (20m by default), kinformer's factory and
## client-go's side by side in one run (same 20 built-in resources, same server). The raw
## output goes to internal/bench/results/watch-requests-<commit>.txt.
WATCH_DURATION ?= 20m
bench-watch-requests:
	@bin=$$($(TESTENV_BUILD)) && echo "server binaries: $$bin" && mkdir -p internal/bench/results && \
	out=internal/bench/results/watch-requests-$$(git rev-parse --short HEAD).txt && \
	KINFORMER_TESTENV_BIN=$$bin KINFORMER_BENCH_WATCH_DURATION=$(WATCH_DURATION) \
	$(GO) test -run '^$$' -bench '^BenchmarkWatchRequests$$' -benchtime 1x -count 1 -timeout 3h -v ./internal/bench | tee $$out && \
	echo "raw output: $$out"

## bench-full: an alias of bench, kept for scripts that call it.
bench-full: bench

# RELIST_PAIRS is how many kinformer/client-go pairs `make bench-relist` runs per cell.
RELIST_PAIRS ?= 5

## bench-relist: the relist after a 410 by list mode (streaming, paged, unpaged LIST) and share
## of pods changed (1, 10, 100 %), 50,000 pods over HTTP, kinformer against client-go, each side
## in its own process, RELIST_PAIRS interleaved pairs per cell (about 15 minutes). Writes the raw
## output to internal/bench/results/relist-<commit>.txt (<commit>-dirty when Go files differ
## from the commit) and the tables to relist-<commit>.md beside it.
bench-relist:
	@commit=$$(git rev-parse --short HEAD); \
	if [ -n "$$(git status --porcelain -- '*.go' go.mod go.sum)" ]; then commit=$$commit-dirty; fi; \
	out=internal/bench/results/relist-$$commit; mkdir -p internal/bench/results; \
	start=$$(date +%s); \
	echo "commit $$commit, started $$(date -u '+%Y-%m-%d %H:%M:%S UTC')" | tee $$out.txt; \
	KINFORMER_BENCH_RELIST_MODES=1 $(GO) test -run '^$$' -bench '^BenchmarkRelistModes$$' -benchtime 1x -count $(RELIST_PAIRS) -timeout 120m ./internal/bench | tee -a $$out.txt; \
	echo "wall time $$(( $$(date +%s) - start )) s (compilation included)" | tee -a $$out.txt; \
	$(GO) run ./internal/bench/cmd/benchtable -relist -machine $$out.txt | tee $$out.md

build:
	$(GO) build $(PKGS)

## soak: the long soak test (internal/soak): 5 informers, 20,000 objects, writes at up to 500/s
## for 60 s with a fault every 2.5 s, then the invariant check; prints the report (writes/s over
## the phase and while the servers were up). It also runs the short soak; both draw a fresh
## random seed (`make test` runs the short soak on a fixed list of seeds). Replay a run with
## KINFORMER_SOAK_SEED=<the seed it printed>.
soak:
	@bin=$$($(TESTENV_BUILD)) && echo "server binaries: $$bin" && \
	KINFORMER_TESTENV_BIN=$$bin KINFORMER_REQUIRE_INTEGRATION=1 KINFORMER_SOAK=long \
	$(GO) test -count=1 -timeout 40m -run '^TestSoak(Short|Long)$$' -v ./internal/soak

## soak-ceiling: what bounds the soak's write rate, without faults (internal/soak
## TestSoakCeiling): writes/s, latencies and server CPU at several writer concurrencies, with
## and without the informers, and how long kube-apiserver and etcd restarts take.
soak-ceiling:
	@bin=$$($(TESTENV_BUILD)) && echo "server binaries: $$bin" && \
	KINFORMER_TESTENV_BIN=$$bin KINFORMER_REQUIRE_INTEGRATION=1 KINFORMER_SOAK=ceiling \
	$(GO) test -count=1 -timeout 20m -run '^TestSoakCeiling$$' -v ./internal/soak
