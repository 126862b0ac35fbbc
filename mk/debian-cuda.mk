# Real CUDA builds suite (test/debiancuda, build tag debiancuda): Debian
# trixie's PyTorch 2.6 built with CUDA 12.4 and the CUDA libraries it loads,
# fetched once by scripts/debian-cuda.sh into a cache outside the clone
# (below, about 4 minutes and 2.5 GB of packages the first
# time), compared per library and per GPU with cuobjdump's listings
# (test/debiancuda/testdata/listings) and checked through the real binary
# with faked GPUs.
#
#   make test-debiancuda [RUN=regexp]

TEST_SUITES += test-debiancuda
DEBIANCUDA_TIMEOUT ?= 20m

# The root goes to /var/cache/gpu-preflight/debian-cuda as root, unless
# CACHE is given on the command line or in the environment.
DEBIANCUDA_CACHE := $(if $(filter file,$(origin CACHE)),,$(CACHE))

.PHONY: test-debiancuda

test-debiancuda: build
	CACHE=$(DEBIANCUDA_CACHE) bash scripts/debian-cuda.sh >/dev/null
	CACHE=$(DEBIANCUDA_CACHE) GPU_PREFLIGHT_BIN=$(CURDIR)/bin/gpu-preflight \
	  $(GO) test -tags debiancuda -count=1 -timeout $(DEBIANCUDA_TIMEOUT) $(if $(RUN),-run '$(RUN)') -v ./test/debiancuda/
