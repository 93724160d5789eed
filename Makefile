# kinformer build and test entry points. `make test` is what CI runs.
GO ?= go
PKGS ?= ./...

# The integration tests run against a real etcd and kube-apiserver that
# internal/testenv/build.sh builds from the Go module proxy (about 12 minutes cold, a no-op
# once built). `make test` requires them; `make test-unit` runs everything without them
# (the integration tests then skip).
TESTENV_BUILD := internal/testenv/build.sh

.PHONY: test test-unit fmt-check vet testenv build

## test: gofmt check, go vet, then the whole suite (integration tests included) under the race detector.
test: fmt-check vet
	@bin=$$($(TESTENV_BUILD)) && echo "server binaries: $$bin" && \
	KINFORMER_TESTENV_BIN=$$bin KINFORMER_REQUIRE_INTEGRATION=1 $(GO) test -race -count=1 -timeout 30m $(PKGS)

## test-unit: the suite without the real API server.
test-unit: fmt-check vet
	$(GO) test -race -count=1 $(PKGS)

## testenv: build etcd and kube-apiserver for the integration tests and print where they are.
testenv:
	@$(TESTENV_BUILD)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

build:
	$(GO) build $(PKGS)
