# The examples suite (test/examples, its own Go module so the Kubernetes API
# types it decodes manifests into stay out of the shim's module graph):
# the Kubernetes manifests, Slurm scripts and logging configuration checked
# against what gpu-preflight reads and writes, the LogQL queries parsed by
# Grafana's own LogQL grammar (Node.js, scripts/logql-grammar.sh), the
# README's abort sample and quick start run. The Dockerfiles are built and
# run by a real engine in mk/podman.mk. README "Testing".
#
#   make test-examples [RUN=regexp]   part of make test

TEST_SUITES += test-examples
EXAMPLES_TIMEOUT ?= 15m

.PHONY: test-examples

# npm ci writes this file last; it is newer than the lock it installed.
LOGQL_GRAMMAR := test/examples/logql/node_modules/.package-lock.json

$(LOGQL_GRAMMAR): test/examples/logql/package-lock.json scripts/logql-grammar.sh
	bash scripts/logql-grammar.sh

test-examples: build $(LOGQL_GRAMMAR)
	cd test/examples && GPU_PREFLIGHT_BIN=$(CURDIR)/bin/gpu-preflight \
	  $(GO) test -count=1 -timeout $(EXAMPLES_TIMEOUT) $(if $(RUN),-run '$(RUN)') ./...
