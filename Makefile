# Kovara Desktop — build and test entry points. `make test` is what CI runs.
GO ?= go
VERSION ?= 0.1.0
LDFLAGS := -X github.com/kovara/desktop/engine.Version=$(VERSION)

.PHONY: all build bench-cli demo test test-race test-truth test-keyring vet fmt-check clean

all: build

build: bench-cli

# The headless binary: no cgo, runs on a display-less server.
bench-cli:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o bin/kovara-bench ./cmd/kovara-bench

# A full benchmark against the built-in simulator.
demo: bench-cli
	./bin/kovara-bench demo

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

test-race:
	$(GO) test -race -count=1 ./...

# Timing accuracy against the simulator's record, without the race
# detector (which slows every goroutine and would measure itself).
test-truth:
	$(GO) test -count=1 -run 'TestTruth' -v ./engine/ ./ui/

# The keyring tests against a real Secret Service (gnome-keyring in a
# private D-Bus session with a throwaway keyring).
test-keyring:
	scripts/with-keyring.sh $(GO) test -race -count=1 -run 'Key|Secret|Trace' ./storage/ ./cmd/kovara-bench/

# Everything CI checks.
test: vet fmt-check test-race test-truth test-keyring

clean:
	rm -rf bin
