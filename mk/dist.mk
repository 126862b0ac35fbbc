# Release artifacts: the static shim for linux/amd64 and linux/arm64, each
# with its own architecture's NVML probe embedded (mk/probe.mk), and their
# checksums. Byte-reproducible: the same commit gives the same bytes from any
# folder (-trimpath, no VCS stamp, the frozen bullseye sysroot, strip), which
# test-dist proves.
#
#   make dist          dist/gpu-preflight-linux-{amd64,arm64}, dist/BUILDINFO
#                      (the toolchain), the FROM scratch image for both
#                      architectures as an OCI archive
#                      (dist/gpu-preflight-image.oci.tar), dist/SHA256SUMS
#   make release       make dist from a committed tree, saying whether it is
#                      a release tag (.github/workflows/release.yml runs it)
#   make dist-image    the same image built by podman from Dockerfile.dist,
#                      for this machine's architecture
#   make test-dist     reproducibility, and the arm64 build run under qemu
#
# The arm64 probe needs Debian's cross compiler on amd64
# (gcc-aarch64-linux-gnu, installed by make deps).

DIST_ARCHES := amd64 arm64
DIST_BINS   := $(DIST_ARCHES:%=dist/gpu-preflight-linux-%)
DIST_IMAGE  ?= gpu-preflight:$(VERSION)
# The image as an OCI archive (scripts/ociarchive: reproducible, no engine),
# named $(DIST_IMAGE) once loaded: podman load -i, docker load -i.
DIST_OCI    := dist/gpu-preflight-image.oci.tar
DIST_FILES  := $(DIST_BINS) dist/BUILDINFO $(DIST_OCI)

.PHONY: dist dist-image release test-dist

dist: dist/SHA256SUMS

# A release is what make dist writes, from a tree with nothing uncommitted
# (its bytes must be the tag's); an untagged commit is built and says so.
release:
	@case "$(VERSION)" in *-dirty) echo "release: $(VERSION): the tree has uncommitted changes; commit them first" >&2; exit 1;; esac
	@$(MAKE) --no-print-directory dist
	@if echo "$(VERSION)" | grep -Eq '^v[0-9]+\.[0-9]+\.[0-9]+$$'; then \
	  echo "release: $(VERSION) in dist/:"; else \
	  echo "release: $(VERSION) is not a release tag (vX.Y.Z): an untagged build, in dist/:"; fi
	@cd dist && cat SHA256SUMS

dist/gpu-preflight-linux-%: preflight/nvml/gpu-preflight-nvml-%.bin $(SHIM_SRCS)
	@mkdir -p dist
	GOOS=linux GOARCH=$* $(SHIM_BUILD) -o $@ ./cmd/gpu-preflight

# What the bytes depend on besides the commit: Go, each probe's C compiler
# (scripts/probe-build.sh writes its line) and the sysroot's pinned
# packages. Two hosts with the same BUILDINFO give the same bytes
# (test/fresh proves it against a fresh debootstrap root).
dist/BUILDINFO: $(DIST_BINS) scripts/sysroot-bullseye.lock
	{ echo "version: $(VERSION)"; echo "go: $$($(GO) env GOVERSION)"; \
	  cat $(DIST_ARCHES:%=bin/linux-%/gpu-preflight-nvml.toolchain); \
	  echo "sysroot: scripts/sysroot-bullseye.lock $$(sha256sum <scripts/sysroot-bullseye.lock | cut -d' ' -f1)"; } >$@.tmp && mv $@.tmp $@

$(DIST_OCI): $(DIST_BINS) scripts/ociarchive/main.go
	$(GO) run ./scripts/ociarchive -o $@ -ref $(DIST_IMAGE) $(foreach a,$(DIST_ARCHES),$(a)=dist/gpu-preflight-linux-$(a))

dist/SHA256SUMS: $(DIST_FILES)
	cd dist && sha256sum $(notdir $(DIST_FILES)) >SHA256SUMS.tmp && mv SHA256SUMS.tmp SHA256SUMS

# For this machine's architecture, with the private podman of the podman
# suite (scripts/podman.sh); `docker build -f Dockerfile.dist dist` works too.
dist-image: dist
	bash scripts/podman.sh build --pull=never -f Dockerfile.dist -t $(DIST_IMAGE) dist

# Kept between runs: make would otherwise delete these intermediate copies
# and relink the release binaries every time.
.SECONDARY: $(DIST_ARCHES:%=preflight/nvml/gpu-preflight-nvml-%.bin) $(DIST_ARCHES:%=bin/linux-%/gpu-preflight-nvml)

# The dist suite (test/dist, build tag dist): two clean clones give
# byte-identical dist/ (one built as `nobody`, after `make run` as its first
# command), and the arm64 binary runs check under qemu-user-static against
# Debian's arm64 libnvidia-ml1 and the fake NVML built for arm64. Root: it
# registers qemu's binfmt_misc handler and switches to nobody.
TEST_SUITES  += test-dist
DIST_TIMEOUT ?= 30m

ifeq ($(shell id -u),0)
test-dist: dist
	bash scripts/qemu-binfmt.sh
	$(GO) test -tags dist -count=1 -timeout $(DIST_TIMEOUT) $(if $(RUN),-run '$(RUN)') -v ./test/dist/
else
test-dist:
	@echo "test-dist: NOT RUN: it registers qemu's binfmt_misc handler and builds as another user, which need root; run 'make test-dist' as root." >&2
	@if [ -n "$$CI" ]; then echo "test-dist: CI is set, and CI must run this suite: failing." >&2; exit 1; fi
endif
