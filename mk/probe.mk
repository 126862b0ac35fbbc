# The cgo NVML probe (cmd/gpu-preflight-nvml), built in a Debian bullseye
# root so it needs at most GLIBC_2.3.3 (SPEC sections 5 and 9), and embedded
# into bin/gpu-preflight, which then runs it from a memfd.
#
#   make probe          bin/gpu-preflight-nvml
#   make device-check   on a machine with a GPU: the probe's raw JSON (NVML, CUDA init
#                       and kernel) and the shim's record, saved under testdata/real/

PROBE_ROOT  := $(CACHE)/probe-bullseye
PROBE_BIN   := bin/gpu-preflight-nvml
PROBE_EMBED := preflight/nvml/gpu-preflight-nvml.bin
PROBE_SRCS  := $(shell find cmd/gpu-preflight-nvml preflight/nvml preflight/facts preflight/cuda preflight/fatbin \( -name '*.go' -o -name '*.[ch]' \) -not -name '*_test.go' 2>/dev/null)

BUILD_DEPS  += $(PROBE_EMBED)
GO_TAGS     += embedprobe

.PHONY: probe

probe: $(PROBE_BIN)

$(PROBE_ROOT)/.ready:
	bash scripts/probe-root.sh $(PROBE_ROOT)

$(PROBE_BIN): $(PROBE_ROOT)/.ready $(PROBE_SRCS) go.mod go.sum scripts/probe-build.sh
	bash scripts/probe-build.sh $(PROBE_ROOT) $@

$(PROBE_EMBED): $(PROBE_BIN)
	cp $< $@

# The outputs go to DEVICE_CHECK_OUT, a fixture TestRealFixtures parses.
DEVICE_CHECK_OUT ?= testdata/real/$(shell hostname -s 2>/dev/null || echo host)-$(shell date -u +%Y%m%d)

device-check: build $(PROBE_BIN)
	bash scripts/device-check.sh $(DEVICE_CHECK_OUT)
