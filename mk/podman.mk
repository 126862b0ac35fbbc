# The real-engine suite (test/examples, build tag podman): Debian's podman
# and buildah with runc build every stage of Dockerfile.example and
# examples/*/Dockerfile from base images made of debootstrapped roots
# (scripts/podman-images.sh), then run them: default and replaced CMD,
# --read-only, --user, podman stop, a GPU host emulated the way the NVIDIA
# Container Toolkit sets a container up, an old driver aborting with 78, and
# the build cache when only CREATED changes. Engine settings and storage are
# private to gpu-preflight (scripts/podman.sh, the download cache's podman).
#
#   make test-podman [RUN=regexp]     part of make test (root)
#
# Run as another user it says so and is not run; with CI set that is an
# error.

TEST_SUITES    += test-podman
PODMAN_TIMEOUT ?= 40m

.PHONY: test-podman

ifeq ($(shell id -u),0)
# dist: the suite also packs the release binary (Dockerfile.dist).
test-podman: dist
	@# -run selects the podman test; a renamed test would otherwise "pass"
	@# with no tests to run, so its PASS line must be there.
	@cd test/examples && out=$$($(GO) test -tags podman -count=1 -timeout $(PODMAN_TIMEOUT) \
	  -run '^TestPodman$$$(if $(RUN),/$(RUN))' -v ./... 2>&1); \
	  rc=$$?; echo "$$out" | grep -v -E '^=== (PAUSE|CONT|RUN|NAME) '; \
	  if [ $$rc -ne 0 ] || ! grep -q '^--- PASS: TestPodman ' <<<"$$out"; then \
	    echo "test-podman: TestPodman did not run and pass" >&2; exit 1; fi
else
test-podman:
	@echo "test-podman: NOT RUN: podman with runc, overlay storage and device nodes needs root here; run 'make test-podman' as root." >&2
	@if [ -n "$$CI" ]; then echo "test-podman: CI is set, and CI must run this suite: failing." >&2; exit 1; fi
endif
