# The examples suite (test/examples, its own Go module so the Kubernetes API
# types it decodes manifests into stay out of the shim's module graph):
# Dockerfile.example and examples/ parsed and checked against the Makefile
# and what gpu-preflight reads and writes, the user guide's abort sample and
# quick start run. README "Testing".
#
#   make test-examples             the default suite (part of make test)
#   make test-examples-container   the example image built as a root filesystem
#                                  and run with runc (root; part of make test)

TEST_SUITES += test-examples test-examples-container
EXAMPLES_TIMEOUT ?= 15m

.PHONY: test-examples test-examples-container

test-examples: build
	cd test/examples && $(GO) vet ./... && $(STATICCHECK) ./...
	cd test/examples && GPU_PREFLIGHT_BIN=$(CURDIR)/bin/gpu-preflight \
	  $(GO) test -count=1 -timeout $(EXAMPLES_TIMEOUT) ./...

ifeq ($(shell id -u),0)
test-examples-container: build
	cd test/examples && $(GO) vet -tags container ./... && $(STATICCHECK) -tags container ./...
	@# -run selects the container test; a renamed test would otherwise
	@# "pass" with no tests to run, so its PASS line must be there.
	@cd test/examples && out=$$(GPU_PREFLIGHT_BIN=$(CURDIR)/bin/gpu-preflight \
	  $(GO) test -tags container -count=1 -timeout $(EXAMPLES_TIMEOUT) -run '^TestImageTree$$' -v ./... 2>&1); \
	  rc=$$?; echo "$$out"; \
	  if [ $$rc -ne 0 ] || ! grep -q '^--- PASS: TestImageTree ' <<<"$$out"; then \
	    echo "test-examples-container: TestImageTree did not run and pass" >&2; exit 1; fi
else
# Not root: say so before anything else is attempted (as mk/container.mk).
test-examples-container:
	@echo "test-examples-container: NOT RUN: building the example image's root filesystem and running it with runc needs root; run 'make test-examples-container' as root." >&2
	@if [ -n "$$CI" ]; then echo "test-examples-container: CI is set, and CI must run this suite: failing." >&2; exit 1; fi
endif
