# The cgo NVML probe (cmd/gpu-preflight-nvml), linked against a Debian
# bullseye sysroot unpacked without root (scripts/sysroot.sh), so it needs
# at most GLIBC_2.28 (scripts/probe-build.sh checks), and embedded into
# bin/gpu-preflight, which then runs it from a memfd. docs/BUILDING.md.
#
#   make probe          bin/gpu-preflight-nvml, for this machine's architecture
#   make device-check   on a machine with a GPU: the probe's raw JSON (NVML, CUDA init
#                       and kernel) and the shim's record, saved under testdata/real/
#
# Each architecture's probe is bin/linux-ARCH/gpu-preflight-nvml and is
# embedded from preflight/nvml/gpu-preflight-nvml-ARCH.bin (git-ignored);
# mk/dist.mk builds both. PROBE_SRCS are the folders of its packages
# (test/makefile checks them against go list -deps).

HOST_ARCH   := $(shell $(GO) env GOARCH)
PROBE_BIN   := bin/gpu-preflight-nvml
PROBE_SRCS  := $(shell find cmd/gpu-preflight-nvml preflight/nvml preflight/facts preflight/nccl preflight/rdmaprobe preflight/transport preflight/cuda preflight/fatbin preflight/elfbound preflight/gpuarch internal/truncate internal/jsonenc \( -name '*.go' -o -name '*.[ch]' \) -not -name '*_test.go' 2>/dev/null)
PROBE_EMBED := preflight/nvml/gpu-preflight-nvml-$(HOST_ARCH).bin

# The probe file too, beside the shim: suites run it directly, and it is
# what a shim without memfd exec falls back to.
BUILD_DEPS  += $(PROBE_EMBED) $(PROBE_BIN)
GO_TAGS     += embedprobe

.PHONY: probe

probe: $(PROBE_BIN)

bin/linux-%/gpu-preflight-nvml: $(PROBE_SRCS) go.mod go.sum scripts/probe-build.sh scripts/sysroot.sh
	CACHE=$(CACHE) GO=$(GO) bash scripts/probe-build.sh $* $@

$(PROBE_BIN): bin/linux-$(HOST_ARCH)/gpu-preflight-nvml
	cp $< $@

preflight/nvml/gpu-preflight-nvml-%.bin: bin/linux-%/gpu-preflight-nvml
	cp $< $@

# The outputs go to DEVICE_CHECK_OUT, a fixture TestRealFixtures parses.
DEVICE_CHECK_OUT ?= testdata/real/$(shell hostname -s 2>/dev/null || echo host)-$(shell date -u +%Y%m%d)

device-check: build $(PROBE_BIN)
	bash scripts/device-check.sh $(DEVICE_CHECK_OUT)
