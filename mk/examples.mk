# The examples suite (test/examples, its own Go module so the Kubernetes API
# types it decodes manifests into stay out of the shim's module graph):
# the Kubernetes manifests, Slurm scripts and logging configuration checked
# against what gpu-preflight reads and writes, the README's abort sample
# and quick start run. The Dockerfiles are built and run by a real engine
# in mk/podman.mk. README "Testing".
#
#   make test-examples             part of make test

TEST_SUITES += test-examples
EXAMPLES_TIMEOUT ?= 15m

.PHONY: test-examples

test-examples: build
	cd test/examples && GPU_PREFLIGHT_BIN=$(CURDIR)/bin/gpu-preflight \
	  $(GO) test -count=1 -timeout $(EXAMPLES_TIMEOUT) ./...
