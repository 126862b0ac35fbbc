# The container suite (test/container, build tag "container"): gpu-preflight
# as the ENTRYPOINT of real OCI containers run by runc, on debootstrap and
# busybox roots cached in the download cache's rootfs (scripts/cache-dir.sh), with the driver files injected the
# way the NVIDIA Container Toolkit injects them. README, "Testing".
#
#   make test-container                  every scenario (needs root)
#   make test-container RUN=compatible   one scenario; RUN is a regexp of
#                                        scenario names, e.g. 'busybox|supervise'
#
# It needs root (runc, overlayfs and bind mounts, device nodes). Run as
# another user it says so and is not run; with CI set (CI=true, as CI
# systems export) that is an error, because CI runs as root and must never
# skip it.

TEST_SUITES       += test-container
CONTAINER_TIMEOUT ?= 10m
# Scenarios mostly wait on runc and on deadlines, so run more of them than
# there are cores.
CONTAINER_PARALLEL ?= 6

.PHONY: test-container

ifeq ($(shell id -u),0)
test-container: build
	GPU_PREFLIGHT_BIN=$(CURDIR)/bin/gpu-preflight \
	  $(GO) test -tags container -count=1 -timeout $(CONTAINER_TIMEOUT) -parallel $(CONTAINER_PARALLEL) \
	  $(if $(RUN),-run '^TestContainer$$/^($(RUN))$$') -v ./test/container/ 2>&1 | \
	  grep -v -E '^=== (PAUSE|CONT|RUN|NAME) ' ; exit $${PIPESTATUS[0]}
else
# Not root: say so before anything else is attempted.
test-container:
	@echo "test-container: NOT RUN: the container suite needs root (runc, overlayfs and bind mounts, device nodes); run 'make test-container' as root." >&2
	@if [ -n "$$CI" ]; then echo "test-container: CI is set, and CI must run this suite: failing." >&2; exit 1; fi
endif
