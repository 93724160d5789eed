# kinformer build and test entry points. `make test` is what CI runs.
GO ?= go
PKGS ?= ./...

.PHONY: test vet fmt-check unit build

## test: format check, go vet, then the whole suite under the race detector.
test: fmt-check vet unit

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

unit:
	$(GO) test -race -count=1 $(PKGS)

build:
	$(GO) build $(PKGS)
