# Real CUDA builds suite (test/debiancuda, build tag debiancuda): Debian
# trixie's PyTorch 2.6 built with CUDA 12.4 and the CUDA libraries it loads,
# fetched once by scripts/debian-cuda.sh into the download cache outside the
# clone (CACHE, scripts/cache-dir.sh; about 4 minutes and 2.5 GB of packages the first
# time), compared per library and per GPU with cuobjdump's listings
# (test/debiancuda/testdata/listings) and checked through the real binary
# with faked GPUs.
#
#   make test-debiancuda [RUN=regexp]

TEST_SUITES += test-debiancuda
DEBIANCUDA_TIMEOUT ?= 20m

.PHONY: test-debiancuda

test-debiancuda: build
	bash scripts/debian-cuda.sh >/dev/null
	GPU_PREFLIGHT_BIN=$(CURDIR)/bin/gpu-preflight \
	  $(GO) test -tags debiancuda -count=1 -timeout $(DEBIANCUDA_TIMEOUT) $(if $(RUN),-run '$(RUN)') -v ./test/debiancuda/
