# End-to-end suite (test/e2e, build tag e2e): the bullseye-linked NVML probe
# and the static shim with the probe embedded, run against the fake
# libnvidia-ml.so.1 the tests compile from go-nvml's nvml.h and against
# Debian's real libnvidia-ml1, and the CUDA smoke test against the fake
# libcuda.so.1 (test/fakecuda) and Debian's real libcuda1 (all fetched once
# into the download cache's nvidia, scripts/cache-dir.sh). Needs no
# root: the probe builds against an unpacked sysroot (mk/probe.mk).
#
#   make test-e2e [RUN=regexp]

TEST_SUITES += test-e2e
E2E_TIMEOUT ?= 10m

.PHONY: test-e2e

test-e2e: build $(PROBE_BIN)
	bash scripts/nvidia-libs.sh >/dev/null
	bash scripts/nvidia-libs.sh "" "" cuda >/dev/null
	bash scripts/rdma-debian.sh image >/dev/null
	GPU_PREFLIGHT_BIN=$(CURDIR)/bin/gpu-preflight GPU_PREFLIGHT_NVML_BIN=$(CURDIR)/$(PROBE_BIN) \
	  $(GO) test -tags e2e -count=1 -timeout $(E2E_TIMEOUT) $(if $(RUN),-run '$(RUN)') -v ./test/e2e/
