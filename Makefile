# gpu-preflight build and test entry points.
#
#   make run     build and run gpu-preflight on this machine (human report)
#   make test    install what the tests need, lint, and run every suite
#
# Areas of the project add their own prerequisites and suites from mk/*.mk:
# BUILD_DEPS (files bin/gpu-preflight needs first), GO_TAGS (build tags for
# the shim), TEST_SUITES (targets `make test` runs after the unit tests).

SHELL       := /bin/bash
GO          ?= go
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT      ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
PKG         := github.com/gpu-preflight/gpu-preflight
LDFLAGS     := -s -w -X $(PKG)/cmd/gpu-preflight/internal/buildinfo.Version=$(VERSION) \
               -X $(PKG)/cmd/gpu-preflight/internal/buildinfo.Commit=$(COMMIT)
STATICCHECK := $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME    ?= 60s
CACHE       ?= $(CURDIR)/.cache
export GOTELEMETRY := off

BUILD_DEPS  :=
GO_TAGS     :=
TEST_SUITES :=
FUZZ_PKGS   :=

-include mk/*.mk

.PHONY: all build run test deps lint unit bench fuzz device-check clean

all: build

build: bin/gpu-preflight

# The shim's build, for this machine's architecture here and for each
# release architecture in mk/dist.mk (with GOARCH set). -buildvcs=false: the
# version is stamped by LDFLAGS, and a VCS stamp would make two clean builds
# differ by their folders' untracked files.
SHIM_SRCS   := $(shell find cmd preflight report -name '*.go' 2>/dev/null) go.mod go.sum
SHIM_BUILD   = CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=false -tags '$(GO_TAGS)' -ldflags '$(LDFLAGS)'

bin/gpu-preflight: $(BUILD_DEPS) $(SHIM_SRCS)
	$(SHIM_BUILD) -o $@ ./cmd/gpu-preflight

# Runs the shim on this machine: a human report of what it finds, then the
# decision. Provenance goes to .cache/provenance so no root is needed.
run: build
	PREFLIGHT_PROVENANCE_DIR=$(CACHE)/provenance bin/gpu-preflight check

deps:
	@bash scripts/deps.sh

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go') $$(git ls-files --others --exclude-standard '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...
	shellcheck --severity=style scripts/*.sh bench/*.sh .ci/run

unit:
	$(GO) test -count=1 ./...

test: deps lint unit $(TEST_SUITES)
	@echo "make test: all suites passed"

# The start-up table against bare exec, tini, dumb-init and an NGC-style
# bash entrypoint, binary sizes and the Go benchmarks (bench/run.sh;
# docs/PERFORMANCE.md quotes it). BENCH_RUNS repetitions per case.
BENCH_RUNS ?= 300
bench: deps build
	bash bench/run.sh $(BENCH_RUNS)

# Runs every fuzz target of every module for FUZZTIME each (default 60s);
# mk/fuzz.mk runs the same, shorter, in make test.
fuzz:
	GO=$(GO) bash scripts/fuzz.sh $(FUZZTIME)

clean:
	rm -rf bin
