# zwatch — common tasks. `make help` lists them.
GO      ?= $(shell command -v go || echo /usr/local/go/bin/go)
BIN     ?= bin/zwatch
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
# SOURCE_DATE_EPOCH (reproducible builds) fixes the build date.
BUILD_DATE ?= $(shell date -u -d "@$${SOURCE_DATE_EPOCH:-$$(date +%s)}" +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS := -s -w -X github.com/zwatch/zwatch/daemon.Version=$(VERSION) -X github.com/zwatch/zwatch/daemon.BuildDate=$(BUILD_DATE)
CONFIG  ?= configs/zwatch.example.yaml
STATE   ?= $(CURDIR)/.state

.PHONY: help build run test lint bench fuzz e2e deb clean

help:
	@echo "build  - build $(BIN)"
	@echo "run    - run zwatch on $(CONFIG) with state in $(STATE)"
	@echo "test   - run the whole test suite"
	@echo "lint   - gofmt check and go vet"
	@echo "bench  - run benchmarks (see docs/benchmarks.md)"
	@echo "fuzz   - fuzz every parser for FUZZTIME each (default 20s)"
	@echo "e2e    - zwatch against real OpenZFS in a QEMU VM (root; e2e/README.md; E2E_ARGS=scenario...)"
	@echo "deb    - Debian packages dist/zwatch_<version>_{amd64,arm64,armhf}.deb (packaging/; DEB_ARCHES=amd64 for one)"

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/zwatch

run: build
	$(BIN) run --config $(CONFIG) --state-dir $(STATE)

test:
	$(GO) test -count=1 ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./... | tee bench.txt

FUZZTIME ?= 20s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# End to end on real OpenZFS in a throw-away QEMU VM (needs root; the VM image is built once
# and cached under /var/cache/zwatch-e2e). E2E_ARGS="offline unplug" runs only those scenarios.
E2E_ARGS ?=
e2e:
	GO=$(GO) e2e/run.sh $(E2E_ARGS)

# Debian packages (packaging/build-deb.sh: static binaries, man pages, completions, the unit,
# nfpm). DEB_ARCHES, DEB_VERSION, DEB_OUT and DEB_MAINTAINER are passed through.
deb:
	GO=$(GO) packaging/build-deb.sh

clean:
	rm -rf bin .state bench.txt dist
