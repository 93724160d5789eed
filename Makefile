# kinformer build and test entry points. `make test` is what CI runs.
GO ?= go
PKGS ?= ./...

# The integration tests run against a real etcd and kube-apiserver that
# internal/testenv/build.sh builds from the Go module proxy (about 12 minutes cold, a no-op
# once built). `make test` requires them; `make test-unit` runs everything without them
# (the integration tests then skip).
TESTENV_BUILD := internal/testenv/build.sh

# NESTED_MODULES are modules inside this repository with go.mod files of their own (glue to
# frameworks the library itself must not depend on, and examples that use them). `./...` of the main module stops at them,
# so test, test-unit and vet run each of them from its folder, with the same environment.
NESTED_MODULES := interop/controllerruntime examples/ctrlruntime

.PHONY: test alloc-guards test-unit demo demo-local fmt-check vet gen-verify generate testenv build bench bench-aa bench-quick bench-full bench-relist bench-store bench-sync bench-decoders bench-syncprobe bench-ctrlrt bench-watch-requests bench-storm bench-sharding soak soak-ceiling fuzz-short

# Every recipe line runs under bash with pipefail, so that a failing command before a pipe
# (a benchmark piped into the table tool) fails the target.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec

# FUZZTIME is how much `make fuzz-short` (part of `make test`) fuzzes each target: a count of
# executions rather than a duration, so that the work done does not shrink on a loaded machine,
# and because Go 1.26's fuzzer can report the end of a -fuzztime duration as a failure
# ("context deadline exceeded", with no failing input) when its deadline races the workers'
# cancellation. 3000 executions take about 10 s per target on 2 loaded cores.
FUZZTIME ?= 3000x
# FUZZMINIMIZETIME bounds the minimisation of each input the fuzzer finds (new coverage or a
# failure). Go's default, 60s per input, can spend all of FUZZTIME on a loaded machine minimising
# instead of executing new inputs; a count of executions bounds it by work instead of time.
FUZZMINIMIZETIME ?= 100x

## test: gofmt check, go vet, generated code up to date, the whole suite (integration tests
## included) and the nested modules' tests under the race detector, then a short run of every
## fuzz target.
test: fmt-check vet gen-verify
	@bin=$$($(TESTENV_BUILD)) && echo "server binaries: $$bin" && \
	KINFORMER_TESTENV_BIN=$$bin KINFORMER_REQUIRE_INTEGRATION=1 $(GO) test -race -count=1 -timeout 30m $(PKGS) && \
	for mod in $(NESTED_MODULES); do \
		echo "nested module $$mod"; \
		(cd $$mod && KINFORMER_TESTENV_BIN=$$bin KINFORMER_REQUIRE_INTEGRATION=1 $(GO) test -race -count=1 -timeout 10m ./...) || exit 1; \
	done
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
## from its committed corpus in testdata/fuzz, minimising each new input for at most
## $(FUZZMINIMIZETIME) (executions). A failing input is written to that corpus: commit
## it with the fix.
fuzz-short:
	@for file in $$(git grep -l '^func Fuzz' -- '*_test.go'); do \
		for target in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$$file"); do \
			echo "fuzz ./$$(dirname "$$file") $$target for $(FUZZTIME)"; \
			$(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) "./$$(dirname "$$file")"; \
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
	@for mod in $(NESTED_MODULES); do echo "nested module $$mod"; (cd $$mod && $(GO) test -race -count=1 ./...) || exit 1; done

## testenv: build etcd and kube-apiserver for the integration tests and print where they are.
testenv:
	@$(TESTENV_BUILD)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)
	@for mod in $(NESTED_MODULES); do echo "go vet in $$mod"; (cd $$mod && $(GO) vet ./...) || exit 1; done

## gen-verify: regenerate informers/ and listers/ into a temporary folder and fail when the
## committed files differ (or when the API drifted from client-go's); the same for the
## generated protobuf decoders of internal/pbdecode.
gen-verify:
	$(GO) run ./internal/gen -verify
	$(GO) run ./internal/gen/pbdecode -verify

## generate: rewrite the generated informers/ and listers/ trees.
generate:
	$(GO) generate ./...

# The pairs of `make bench` (and of its A/A controls, `make bench-aa`): each group of
# benchmarks is one `go test -benchtime 1x -count <pairs>` invocation, and each benchmark op
# measures one pair (kinformer, client-go and the floor, in an order that alternates from op to
# op), so -count is the number of pairs. The table tool judges a row only with at least 10
# pairs on the run and on its A/A control (bench.MinPairs), so every group has 10.
BENCH_SYNC_PAIRS ?= 10
BENCH_SYNC_LARGE_PAIRS ?= 10
BENCH_EVENTS_PAIRS ?= 10
BENCH_RELIST_PAIRS ?= 10
BENCH_HTTP_PAIRS ?= 10
BENCH_LEAN_PAIRS ?= 10
BENCH_BLOCKED_PAIRS ?= 10
BENCH_APISERVER_PAIRS ?= 10
BENCH_PROJECTION_PAIRS ?= 10
BENCH_STORE_PAIRS ?= 10
# BENCH_CTRLRT_PAIRS: the controller-runtime manager group (BenchmarkManagerSync of the nested
# module interop/controllerruntime, on the real API server).
BENCH_CTRLRT_PAIRS ?= 10
# BENCH_QUICK_PAIRS is the -count of every group of `make bench-quick`.
BENCH_QUICK_PAIRS ?= 3
# BENCH_TIMEOUT bounds each `go test` invocation.
BENCH_TIMEOUT ?= 60m
BENCH_PAIR_VARS = BENCH_SYNC_PAIRS=$(BENCH_SYNC_PAIRS) BENCH_SYNC_LARGE_PAIRS=$(BENCH_SYNC_LARGE_PAIRS) \
	BENCH_EVENTS_PAIRS=$(BENCH_EVENTS_PAIRS) BENCH_RELIST_PAIRS=$(BENCH_RELIST_PAIRS) BENCH_HTTP_PAIRS=$(BENCH_HTTP_PAIRS) \
	BENCH_LEAN_PAIRS=$(BENCH_LEAN_PAIRS) BENCH_BLOCKED_PAIRS=$(BENCH_BLOCKED_PAIRS) BENCH_APISERVER_PAIRS=$(BENCH_APISERVER_PAIRS) \
	BENCH_PROJECTION_PAIRS=$(BENCH_PROJECTION_PAIRS) BENCH_STORE_PAIRS=$(BENCH_STORE_PAIRS) \
	BENCH_CTRLRT_PAIRS=$(BENCH_CTRLRT_PAIRS)
BENCHTABLE = $(GO) run ./internal/bench/cmd/benchtable

# BENCH_START, in a recipe: sets commit (the short commit id, <commit>-dirty when Go files
# differ from it) and start (the time in seconds, for the wall time).
BENCH_START = commit=$$(git rev-parse --short HEAD); \
	if [ -n "$$(git status --porcelain -- '*.go' go.mod go.sum)" ]; then commit=$$commit-dirty; fi; \
	start=$$(date +%s)
# BENCH_GROUP, in a recipe: defines the shell function `group ENV REGEX PAIRS [MODULE]`, which
# appends to $$raw the command line ("# run: ...") and then the output of one `go test`
# invocation of the benchmarks REGEX matches, ENV set, PAIRS pairs: of ./internal/bench, or,
# with MODULE (a nested module's folder, such as interop/controllerruntime), of the package at
# that module's root, run from its folder. A failing benchmark fails it (pipefail, -e).
BENCH_GROUP = group() { \
	pkg=./internal/bench; if [ -n "$${4:-}" ]; then pkg=.; fi; \
	cmd="$${1:+$$1 }$(GO) test -run '^$$' -bench '$$2' -benchtime 1x -count $$3 -timeout $(BENCH_TIMEOUT) $$pkg"; \
	if [ -n "$${4:-}" ]; then cmd="(cd $$4 && $$cmd)"; fi; \
	echo "\# run: $$cmd" | tee -a "$$raw"; \
	eval "$$cmd" 2>&1 | tee -a "$$raw"; \
	}
# BENCH_GROUPS, in a recipe after BENCH_GROUP: the groups of `make bench`, in order, each
# with the environment $$aa (empty, or KINFORMER_BENCH_AA=1 for the A/A controls) and, for the
# controller-runtime group, $$ctrlaa (empty, or KINFORMER_CTRLRT_BENCH_AA=kinformer); $$bin
# holds the server binaries.
BENCH_GROUPS = \
	group "$${aa:+$$aa }KINFORMER_BENCH_FULL=1" '^BenchmarkSync$$/^pods=(1000|10000)$$' $(BENCH_SYNC_PAIRS); \
	group "$${aa:+$$aa }KINFORMER_BENCH_FULL=1" '^BenchmarkSync$$/^pods=(50000|100000)$$' $(BENCH_SYNC_LARGE_PAIRS); \
	group "$${aa:+$$aa }KINFORMER_BENCH_FULL=1" '^BenchmarkEvents$$' $(BENCH_EVENTS_PAIRS); \
	group "$${aa:+$$aa }KINFORMER_BENCH_FULL=1" '^BenchmarkRelist$$' $(BENCH_RELIST_PAIRS); \
	group "$${aa:+$$aa }KINFORMER_BENCH_FULL=1" '^BenchmarkHTTP$$' $(BENCH_HTTP_PAIRS); \
	group "$${aa:+$$aa }KINFORMER_BENCH_FULL=1" '^BenchmarkLean$$' $(BENCH_LEAN_PAIRS); \
	group "$${aa:+$$aa }KINFORMER_BENCH_FULL=1" '^BenchmarkBlockedHandler$$' $(BENCH_BLOCKED_PAIRS); \
	group "$${aa:+$$aa }KINFORMER_BENCH_FULL=1" '^BenchmarkProjection$$' $(BENCH_PROJECTION_PAIRS); \
	group "$${aa:+$$aa }KINFORMER_BENCH_FULL=1" '^BenchmarkStore$$' $(BENCH_STORE_PAIRS); \
	group "$${aa:+$$aa }KINFORMER_BENCH_FULL=1 KINFORMER_TESTENV_BIN=$$bin" '^BenchmarkAPIServer$$' $(BENCH_APISERVER_PAIRS); \
	group "$${ctrlaa:+$$ctrlaa }KINFORMER_TESTENV_BIN=$$bin" '^BenchmarkManagerSync$$' $(BENCH_CTRLRT_PAIRS) interop/controllerruntime
# BENCH_END, in a recipe: appends the wall time and the load average to $$raw.
BENCH_END = echo "\# wall time: $$(( $$(date +%s) - start )) s" | tee -a "$$raw"; \
	echo "\# load average at end: $$(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$$raw"

## bench: kinformer against client-go, side by side, at the sizes of the benchmark protocol
## (Sync 1,000 to 100,000 pods, Events 1/10/50 handlers, Relist 50,000 pods, HTTP 20,000 pods,
## Lean 10,000 pods, BlockedHandler, Projection, Store (NewStore and NewIndexer used directly,
## 10,000 and 1,000,000 objects), 10,000 pods on the real kube-apiserver, and a
## controller-runtime manager caching 10,000 pods from it on each engine (BenchmarkManagerSync,
## run from the nested module interop/controllerruntime, which alone may import
## controller-runtime), each group its own `go test` with its BENCH_*_PAIRS pairs, 10 each (the
## groups on the real API server last, each starting its own server and stopping it when it
## ends). Writes the raw output to internal/bench/results/bench-<commit>.txt
## (<commit>-dirty when Go files differ from the commit), the tables and SVG plots to
## internal/bench/results/bench-<commit>/, and replaces BENCHMARKS.md's block between
## <!-- bench:begin --> and <!-- bench:end -->. The readings and targets are judged against the
## A/A controls of BENCH_AA_RAW (see bench-aa): by default
## internal/bench/results/bench-aa-<commit>.txt when it exists, else the A/A raw file committed
## last; without one every row reads "not judged". Fails on a failing benchmark and on a
## benchmark of the protocol missing from the output. About 30 minutes on 2 idle cores; the raw
## file's last lines record the wall time.
BENCH_AA_RAW ?=
bench:
	@for marker in '<!-- bench:begin -->' '<!-- bench:end -->'; do \
		grep -qxF "$$marker" BENCHMARKS.md || { echo "BENCHMARKS.md has no line $$marker: make bench replaces what is between the two marker lines" >&2; exit 1; }; \
	done; \
	bin=$$($(TESTENV_BUILD)); echo "server binaries: $$bin"; \
	$(BENCH_START); raw=internal/bench/results/bench-$$commit.txt; mkdir -p internal/bench/results; \
	aaraw="$(BENCH_AA_RAW)"; \
	if [ -z "$$aaraw" ]; then \
		aaraw=internal/bench/results/bench-aa-$$commit.txt; \
		[ -f "$$aaraw" ] || aaraw=$$(git log -1 --diff-filter=A --name-only --format= -- 'internal/bench/results/bench-aa-*.txt' | head -n 1); \
	fi; \
	if [ -n "$$aaraw" ] && [ ! -f "$$aaraw" ]; then echo "BENCH_AA_RAW=$$aaraw: no such file" >&2; exit 1; fi; \
	if [ -z "$$aaraw" ]; then echo "no A/A controls (make bench-aa): every row will read \"not judged\"" >&2; fi; \
	$(BENCHTABLE) -header -commit $$commit -sizes full -command "make bench $(BENCH_PAIR_VARS)" | tee "$$raw"; \
	echo "raw output: $$raw" >&2; \
	$(BENCH_GROUP); \
	aa=; ctrlaa=; $(BENCH_GROUPS); \
	$(BENCH_END); \
	$(BENCHTABLE) -full $${aaraw:+-aa "$$aaraw"} -out internal/bench/results/bench-$$commit -update BENCHMARKS.md "$$raw"

## bench-aa: the A/A controls of `make bench`: the same groups, sizes and pairs, with
## KINFORMER_BENCH_AA=1 (the client-go side of every scenario runs kinformer, built as the
## kinformer side is; no floor) and the controller-runtime group with
## KINFORMER_CTRLRT_BENCH_AA=kinformer, so that each row's per-pair ratios show the run-to-run
## spread of identical code, which `make bench` judges its readings and targets against. Writes
## the raw output to internal/bench/results/bench-aa-<commit>.txt (<commit>-dirty when Go files
## differ from the commit; commit it with the run it controls) and its table to
## internal/bench/results/bench-aa-<commit>.md; leaves BENCHMARKS.md alone. About 25 minutes on
## 2 idle cores (no floor side); run it on the same machine as `make bench`, just before it.
bench-aa:
	@bin=$$($(TESTENV_BUILD)); echo "server binaries: $$bin"; \
	$(BENCH_START); raw=internal/bench/results/bench-aa-$$commit.txt; mkdir -p internal/bench/results; \
	$(BENCHTABLE) -header -commit $$commit -sizes full -command "make bench-aa $(BENCH_PAIR_VARS)" | tee "$$raw"; \
	echo "# what: A/A controls: every scenario of make bench with kinformer on both sides (KINFORMER_BENCH_AA=1, KINFORMER_CTRLRT_BENCH_AA=kinformer), no floor" | tee -a "$$raw"; \
	echo "raw output: $$raw" >&2; \
	$(BENCH_GROUP); \
	aa=KINFORMER_BENCH_AA=1; ctrlaa=KINFORMER_CTRLRT_BENCH_AA=kinformer; $(BENCH_GROUPS); \
	$(BENCH_END); \
	$(BENCHTABLE) -machine "$$raw" | tee internal/bench/results/bench-aa-$$commit.md

## bench-quick: the same groups at the reduced sizes, without the real API server, with
## BENCH_QUICK_PAIRS pairs each (a few minutes). Writes the raw output to
## internal/bench/results/quick/bench-<commit>.txt and the tables and plots to
## internal/bench/results/quick/bench-<commit>/ (not committed); leaves BENCHMARKS.md alone.
bench-quick:
	@$(BENCH_START); raw=internal/bench/results/quick/bench-$$commit.txt; mkdir -p internal/bench/results/quick; \
	$(BENCHTABLE) -header -commit $$commit -sizes reduced -command "make bench-quick BENCH_QUICK_PAIRS=$(BENCH_QUICK_PAIRS)" | tee "$$raw"; \
	echo "raw output: $$raw" >&2; \
	$(BENCH_GROUP); \
	for regex in '^BenchmarkSync$$' '^BenchmarkEvents$$' '^BenchmarkRelist$$' '^BenchmarkHTTP$$' '^BenchmarkLean$$' '^BenchmarkBlockedHandler$$' '^BenchmarkProjection$$' '^BenchmarkStore$$'; do \
		group "" "$$regex" $(BENCH_QUICK_PAIRS); \
	done; \
	$(BENCH_END); \
	$(BENCHTABLE) -out internal/bench/results/quick/bench-$$commit "$$raw"

## bench-store: only the Store group of `make bench` (NewStore and NewIndexer used directly:
## Add, Update, List, ByIndex, Delete at 10,000 and 1,000,000 objects, kinformer against
## client-go in one process, BENCH_STORE_PAIRS pairs). Writes the raw output to
## internal/bench/results/store-<commit>.txt (<commit>-dirty when Go files differ from the
## commit) and its table to internal/bench/results/store-<commit>.md; leaves BENCHMARKS.md alone.
bench-store:
	@$(BENCH_START); raw=internal/bench/results/store-$$commit.txt; mkdir -p internal/bench/results; \
	$(BENCHTABLE) -header -commit $$commit -sizes full -command "make bench-store BENCH_STORE_PAIRS=$(BENCH_STORE_PAIRS)" | tee "$$raw"; \
	echo "raw output: $$raw" >&2; \
	$(BENCH_GROUP); \
	group KINFORMER_BENCH_FULL=1 '^BenchmarkStore$$' $(BENCH_STORE_PAIRS); \
	$(BENCH_END); \
	$(BENCHTABLE) -machine "$$raw" | tee internal/bench/results/store-$$commit.md

# BENCH_PART, in a recipe after BENCH_START and BENCH_GROUP: defines the shell function
# `part NAME COMMAND WHAT` of the partial runs (bench-sync, bench-decoders), which runs the
# shell function `groups ENV` (the recipe's groups, each with ENV) twice: first as A/A controls
# (KINFORMER_BENCH_AA=1) into internal/bench/results/NAME-aa-<commit>.txt, then as the run
# into internal/bench/results/NAME-<commit>.txt, each file headed by COMMAND and WHAT; then it
# writes the run's table, judged against those controls, to
# internal/bench/results/NAME-<commit>.md.
BENCH_PART = part() { \
	name=$$1; command=$$2; what=$$3; aaraw=internal/bench/results/$$name-aa-$$commit.txt; \
	mkdir -p internal/bench/results; \
	for aa in 1 0; do \
		raw=internal/bench/results/$$name-$$commit.txt; env=KINFORMER_BENCH_FULL=1; pre=; \
		if [ $$aa = 1 ]; then raw=$$aaraw; env="KINFORMER_BENCH_AA=1 $$env"; pre="A/A controls: "; fi; \
		$(BENCHTABLE) -header -commit $$commit -sizes full -command "$$command" | tee "$$raw"; \
		echo "\# what: $$pre$$what$${pre:+ (kinformer on both sides, no floor)}" | tee -a "$$raw"; \
		echo "raw output: $$raw" >&2; \
		groups "$$env"; \
		$(BENCH_END); start=$$(date +%s); \
	done; \
	$(BENCHTABLE) -machine -aa "$$aaraw" "$$raw" | tee internal/bench/results/$$name-$$commit.md; \
	}

## bench-sync: only the Sync group of `make bench` (the initial sync from memory at 1,000 to
## 100,000 pods, BENCH_SYNC_PAIRS and BENCH_SYNC_LARGE_PAIRS pairs), first its A/A controls
## (KINFORMER_BENCH_AA=1), then the run, judged against them. Writes the raw output to
## internal/bench/results/sync-aa-<commit>.txt and sync-<commit>.txt (<commit>-dirty when Go
## files differ from the commit) and the run's table to internal/bench/results/sync-<commit>.md;
## leaves BENCHMARKS.md alone. About 10 minutes on 2 idle cores.
bench-sync:
	@$(BENCH_START); $(BENCH_GROUP); $(BENCH_PART); \
	groups() { \
		group "$$1" '^BenchmarkSync$$/^pods=(1000|10000)$$' $(BENCH_SYNC_PAIRS); \
		group "$$1" '^BenchmarkSync$$/^pods=(50000|100000)$$' $(BENCH_SYNC_LARGE_PAIRS); \
	}; \
	part sync "make bench-sync BENCH_SYNC_PAIRS=$(BENCH_SYNC_PAIRS) BENCH_SYNC_LARGE_PAIRS=$(BENCH_SYNC_LARGE_PAIRS)" \
		"BenchmarkSync, the initial sync from memory, kinformer against client-go"

## bench-decoders: only the rows of `make bench` that kinformer's typed decoders change
## (HTTP/default and HTTP/default-decoders-off over the in-process server, APIServer/default
## and APIServer/default-decoders-off on the real kube-apiserver; BENCH_HTTP_PAIRS and
## BENCH_APISERVER_PAIRS pairs), first their A/A controls, then the run, judged against them.
## Writes internal/bench/results/decoders-aa-<commit>.txt, decoders-<commit>.txt and
## decoders-<commit>.md; leaves BENCHMARKS.md alone. About 10 minutes on 2 idle cores.
bench-decoders:
	@bin=$$($(TESTENV_BUILD)); echo "server binaries: $$bin"; \
	$(BENCH_START); $(BENCH_GROUP); $(BENCH_PART); \
	groups() { \
		group "$$1" '^BenchmarkHTTP$$/^default' $(BENCH_HTTP_PAIRS); \
		group "$$1 KINFORMER_TESTENV_BIN=$$bin" '^BenchmarkAPIServer$$/^default' $(BENCH_APISERVER_PAIRS); \
	}; \
	part decoders "make bench-decoders BENCH_HTTP_PAIRS=$(BENCH_HTTP_PAIRS) BENCH_APISERVER_PAIRS=$(BENCH_APISERVER_PAIRS)" \
		"the rows kinformer's typed decoders change, kinformer against client-go"

## bench-syncprobe: the initial sync outside the harness (internal/bench/cmd/syncprobe: one fresh
## process per run, cache.NewSharedIndexInformer over an in-memory ListWatch, the namespace index
## and one handler), client-go against kinformer at each of SYNCPROBE_COMMITS (default: HEAD),
## SYNCPROBE_REPS reps at 50,000 and 10,000 pods, the order rotating; then 5 reps with the list
## built inside ListFunc. Writes internal/bench/results/syncprobe-<commit>.txt with the summary
## (<commit>-dirty when Go files differ from the commit: the tool is built from the work tree).
## About 5 minutes on 2 idle cores with 4 commits.
SYNCPROBE_REPS ?= 10
SYNCPROBE_COMMITS ?= $(shell git rev-parse --short HEAD)
bench-syncprobe:
	@$(BENCH_START); mkdir -p internal/bench/results; \
	internal/bench/cmd/syncprobe/compare.sh internal/bench/results/syncprobe-$$commit.txt $(SYNCPROBE_REPS) $(SYNCPROBE_COMMITS)

## bench-ctrlrt: only the controller-runtime group of `make bench` (BenchmarkManagerSync of
## interop/controllerruntime: a manager caching 10,000 pods from the real kube-apiserver,
## controller-runtime's default engine against kinformer's, BENCH_CTRLRT_PAIRS pairs), then its
## A/A controls: one group per engine of BENCH_CTRLRT_AA (both sides on that engine, rows named
## ManagerSync/aa=<engine>/...; empty for none), each its own `go test` and server. Writes the
## raw output to internal/bench/results/ctrlrt-<commit>.txt (<commit>-dirty when Go files
## differ from the commit) and its table to internal/bench/results/ctrlrt-<commit>.md; leaves
## BENCHMARKS.md alone. About 5 minutes on 2 cores.
BENCH_CTRLRT_AA ?= client-go kinformer
bench-ctrlrt:
	@bin=$$($(TESTENV_BUILD)); echo "server binaries: $$bin"; \
	$(BENCH_START); raw=internal/bench/results/ctrlrt-$$commit.txt; mkdir -p internal/bench/results; \
	$(BENCHTABLE) -header -commit $$commit -sizes full -command "make bench-ctrlrt BENCH_CTRLRT_PAIRS=$(BENCH_CTRLRT_PAIRS) BENCH_CTRLRT_AA='$(BENCH_CTRLRT_AA)'" | tee "$$raw"; \
	echo "# what: a controller-runtime manager with a no-op pod controller caching 10,000 bench.NewPod pods from the real kube-apiserver (internal/testenv), its cache on controller-runtime's default engine (c) and on kinformer's controllerruntime.NewInformer (k); ManagerSync/aa=<engine> rows run that engine on both sides (A/A control)" | tee -a "$$raw"; \
	echo "# how: one pair per op (-benchtime 1x -count N), each side in its own child process, the side run first alternating; sync-ms from manager.New to the pod informer's HasSynced, peaklive-MB the highest /gc/heap/live over that time, retained-MB after two forced GCs once every pod was reconciled, both above the live heap before manager.New" | tee -a "$$raw"; \
	echo "raw output: $$raw" >&2; \
	$(BENCH_GROUP); \
	group "KINFORMER_TESTENV_BIN=$$bin" '^BenchmarkManagerSync$$' $(BENCH_CTRLRT_PAIRS) interop/controllerruntime; \
	for aa in $(BENCH_CTRLRT_AA); do \
		group "KINFORMER_TESTENV_BIN=$$bin KINFORMER_CTRLRT_BENCH_AA=$$aa" '^BenchmarkManagerSync$$' $(BENCH_CTRLRT_PAIRS) interop/controllerruntime; \
	done; \
	$(BENCH_END); \
	$(BENCHTABLE) -machine "$$raw" | tee internal/bench/results/ctrlrt-$$commit.md

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

## bench-storm: the startup storm: 50 informers (20 built-in resources, 30 custom resources)
## started at once against a real kube-apiserver with a low --max-requests-inflight whose API
## Priority and Fairness rejects (429) what exceeds the informers' share, then the server
## restarted under them; the default configurations first (client-go's factories, kinformer's
## factories on their defaults), then kinformer's opt-in ones (one listadmission.Admission shared
## by its factories, admission off), one after the other, STORM_RUNS times (3 by default) with the
## sides' order rotating from run to run. Peak LISTs in flight and 429s counted on the wire, time
## to all synced, kube-apiserver's peak RSS, the load average: every storm of every run, then per
## side and storm the median and range over the runs. Raw output and tables:
## internal/bench/results/storm-<commit>.txt. About 25 minutes at 3 runs; run it on an otherwise
## idle machine.
STORM_RUNS ?= 3
bench-storm:
	@bin=$$($(TESTENV_BUILD)) && echo "server binaries: $$bin" && mkdir -p internal/bench/results && \
	out=internal/bench/results/storm-$$(git rev-parse --short HEAD).txt && \
	KINFORMER_TESTENV_BIN=$$bin KINFORMER_BENCH_STORM=1 KINFORMER_STORM_RUNS=$(STORM_RUNS) \
	$(GO) test -run '^$$' -bench '^BenchmarkStartupStorm$$' -benchtime 1x -count 1 -timeout 90m -v ./internal/bench | tee $$out && \
	echo "raw output: $$out"

# BENCH_SHARDING_RUNS is how many groups of replicas `make bench-sharding` runs per number of
# replicas.
BENCH_SHARDING_RUNS ?= 5

## bench-sharding: one controller's 20,000 pods split between 1, 2 and 4 replicas by dynamic
## membership (package sharding: 16 ranges, its default Lease timings) on a real kube-apiserver
## with the ShardedListAndWatch gate on, each replica a child process of its own
## (BenchmarkShardedSync): per replica bytes received, heap, CPU and initial sync time, and the
## handoff time after one replica crashes. BENCH_SHARDING_RUNS groups per number of replicas,
## one result line each (about 10 minutes with 5). Raw output:
## internal/bench/results/sharding-<commit>.txt (<commit>-dirty when Go files differ from the
## commit). Run it on an otherwise idle machine.
bench-sharding:
	@bin=$$($(TESTENV_BUILD)); echo "server binaries: $$bin"; \
	commit=$$(git rev-parse --short HEAD); \
	if [ -n "$$(git status --porcelain -- '*.go' go.mod go.sum)" ]; then commit=$$commit-dirty; fi; \
	mkdir -p internal/bench/results; out=internal/bench/results/sharding-$$commit.txt; start=$$(date +%s); \
	echo "# commit $$commit, started $$(date -u '+%Y-%m-%d %H:%M:%S UTC') on $$(nproc) CPUs, load average $$(cut -d' ' -f1-3 /proc/loadavg)" | tee $$out; \
	echo "# command: make bench-sharding BENCH_SHARDING_RUNS=$(BENCH_SHARDING_RUNS)" | tee -a $$out; \
	KINFORMER_TESTENV_BIN=$$bin KINFORMER_BENCH_FULL=1 \
	$(GO) test -run '^$$' -bench '^BenchmarkShardedSync$$' -benchtime 1x -count $(BENCH_SHARDING_RUNS) -timeout 120m ./internal/bench | tee -a $$out; \
	echo "# wall time $$(( $$(date +%s) - start )) s (compilation included), load average at the end $$(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $$out; \
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
