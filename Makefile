# gpu-preflight build and test entry points.
#
#   make run     build and run gpu-preflight on this machine (human report)
#   make test    install what the tests need, lint, run every suite, hold their times to the README's
#   make build   bin/gpu-preflight (the probe embedded) and bin/gpu-preflight-nvml
#   make deps    install the Debian packages the suites need (scripts/deps.sh)
#   make lint    gofmt, go vet, staticcheck, deadcode (every module, every suite's tag), shellcheck, duplicates
#   make fmt     gofmt -w every Go file
#   make generate  regenerate the generated Go files (the record's JSON encoder: internal/cmd/jsongen)
#   make unit    go test ./... (the unit tests, and the fuzz seeds)
#   make bench   the start-up and benchmark figures of docs/PERFORMANCE.md
#   make clean   remove build outputs (bin/, dist/, the embedded probe copies)
#   make help    this list, and each suite's target from mk/*.mk
#
# Areas of the project add their own prerequisites and suites from mk/*.mk:
# BUILD_DEPS (files bin/gpu-preflight needs first), GO_TAGS (build tags for
# the shim), TEST_SUITES (targets `make test` runs after the unit tests).

SHELL       := /bin/bash
GO          ?= go
# vX.Y.Z from the release tags, v0.0.0-N-gHASH untagged (scripts/version.sh).
VERSION     ?= $(shell bash scripts/version.sh)
COMMIT      ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
PKG         := github.com/gpu-preflight/gpu-preflight
LDFLAGS     := -s -w -X $(PKG)/internal/buildinfo.Version=$(VERSION) \
               -X $(PKG)/internal/buildinfo.Commit=$(COMMIT)
STATICCHECK := $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
DEADCODE    := $(GO) run golang.org/x/tools/cmd/deadcode@v0.52.0
FUZZTIME    ?= 60s
# Downloads (sysroots, root filesystems, NVIDIA packages, base images):
# outside the clone, so a fresh clone downloads nothing again
# (scripts/cache-dir.sh says where). The suites read it from the environment.
CACHE       ?= $(shell bash scripts/cache-dir.sh)
export CACHE
export GOTELEMETRY := off

BUILD_DEPS  :=
GO_TAGS     :=
TEST_SUITES :=

# The shim's build, for this machine's architecture here and for each
# release architecture in mk/dist.mk (with GOARCH set). -buildvcs=false: the
# version is stamped by LDFLAGS, and a VCS stamp would make two clean builds
# differ by their folders' untracked files. Tests are no source of the
# binary: editing one rebuilds nothing. SHIM_DIRS are the folders of its
# packages (test/makefile checks them against go list -deps, and that
# Dockerfile.example copies each).
SHIM_DIRS   := app cmd internal preflight report
# bin/.stamp holds the version and commit stamped into the shim, rewritten
# only when they change, so a new commit or tag relinks the shim (the
# sources alone would not tell make).
STAMP       := bin/.stamp
$(shell mkdir -p bin && { [ "$$(cat $(STAMP) 2>/dev/null)" = "$(VERSION) $(COMMIT)" ] || echo "$(VERSION) $(COMMIT)" >$(STAMP); })
SHIM_SRCS   := $(shell find $(SHIM_DIRS) -name '*.go' -not -name '*_test.go' 2>/dev/null) go.mod go.sum $(STAMP)
SHIM_BUILD   = CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=false -tags '$(GO_TAGS)' -ldflags '$(LDFLAGS)'

# make expands a rule's prerequisites when it reads the rule, so a variable
# one mk file gives another must be set before that file is read: everything
# above, then mk/probe.mk (PROBE_BIN, BUILD_DEPS: the shim embeds the
# probe), then the rest. test/make checks the prerequisites that result.
include mk/probe.mk
include $(filter-out mk/probe.mk,$(sort $(wildcard mk/*.mk)))

.PHONY: all build run test deps lint fmt generate unit bench fuzz clean help

all: build

build: bin/gpu-preflight

bin/gpu-preflight: $(BUILD_DEPS) $(SHIM_SRCS)
	$(SHIM_BUILD) -o $@ ./cmd/gpu-preflight

# Runs the shim on this machine: a human report of what it finds, then the
# decision. Provenance goes to .cache/provenance in the clone, a build
# output, so no root is needed.
run: build
	PREFLIGHT_PROVENANCE_DIR=$(CURDIR)/.cache/provenance bin/gpu-preflight check

deps:
	@bash scripts/deps.sh

# Go files of this checkout, tracked or new (not ignored ones under .cache).
GO_FILES     = $(shell git ls-files --cached --others --exclude-standard '*.go')
# The build tags the suites' files are behind (//go:build container...):
# lint vets every package under all of them at once, so each suite's
# files are checked here and no suite target vets again.
SUITE_TAGS  := $(shell grep -rhsE '^//go:build [a-z0-9]+$$' --include='*.go' test | cut -d' ' -f2 | sort -u | paste -sd, -)
# The Go modules: this one, and the test module of the examples suite.
GO_MODULES  := . test/examples

# go vet, staticcheck and deadcode (functions no program or test reaches)
# once per module, with every suite's tag; gofmt; shellcheck on every
# script; duplicates on the shim's code (test/lint/duplicates.sh).
lint:
	@out=$$(gofmt -l $(GO_FILES)); \
	  if [ -n "$$out" ]; then echo "gofmt needed (make fmt):"; echo "$$out"; exit 1; fi
	@for m in $(GO_MODULES); do \
	  echo "vet and staticcheck in $$m, tags $(SUITE_TAGS)"; \
	  (cd $$m && $(GO) vet -tags '$(SUITE_TAGS)' ./... && $(STATICCHECK) -tags '$(SUITE_TAGS)' ./...) || exit 1; \
	  dead=$$(cd $$m && $(DEADCODE) -test -tags '$(SUITE_TAGS)' ./...) || exit 1; \
	  if [ -n "$$dead" ]; then echo "unreachable code in $$m (delete it, or use it):"; echo "$$dead"; exit 1; fi; \
	done
	shellcheck --severity=style scripts/*.sh bench/*.sh test/*/*.sh .ci/run
	bash test/lint/duplicates.sh

fmt:
	gofmt -w $(GO_FILES)

# The JSON encoders (record_json.go and the like) are generated from the
# types' struct tags (go:generate lines); their tests fail when one is
# stale. preflight before report: the record calls the facts' encoders.
generate:
	$(GO) generate ./internal/... ./preflight/... ./report/...

unit:
	$(GO) test -count=1 ./...

# Each step in turn, timed, into SUITE_TIMES (scripts/test-steps.sh; -k is
# not passed on: the first failing step stops the run), then those times
# held to the suite times README.md quotes and to make test's 10 minutes
# (test/figures/suitetimes), a step that downloaded excused.
TEST_STEPS  := deps lint unit $(TEST_SUITES)
SUITE_TIMES := .cache/suite-times
test:
	@MAKE='$(MAKE)' bash scripts/test-steps.sh $(SUITE_TIMES) $(TEST_STEPS)
	@$(GO) run ./test/figures/suitetimes $(SUITE_TIMES)

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
	rm -rf bin dist preflight/nvml/gpu-preflight-nvml-*.bin

# The "make ..." lines of the comments above and of each mk/*.mk, so the
# list is written once, where each target is.
help:
	@grep -h '^#   make ' $(MAKEFILE_LIST) | sed 's/^#   //'
