# The fresh-machine suite (test/fresh, build tag fresh): a debootstrap
# --variant=minbase root of each Debian release the suite names (bookworm,
# trixie), nothing else installed, runs `make deps`, `make run` and
# `make dist` in a chroot; on bookworm, this machine's release and
# toolchain, dist/SHA256SUMS must be this checkout's. And `make run` under
# the two Ubuntu apt layouts (no Debian source), in a private mount
# namespace, with SYSROOT_MIRROR. docs/BUILDING.md.
#
#   make test-fresh [RUN=regexp]     part of make test (root)
#   make fresh-make-test [FRESH_RELEASE=bookworm]
#                                    by hand, not in make test: make test
#                                    itself as the first command in a fresh
#                                    root, then make run as a new user there
#                                    (scripts/fresh-make-test.sh; root)
#
# Cached in $(CACHE)/fresh: the debootstrapped roots (about 70 s each, once),
# the layer make deps installed (once per package list, deps.sh --list)
# and a Go build cache per root. FRESH_REDO=1 runs make deps again.

TEST_SUITES   += test-fresh
FRESH_TIMEOUT ?= 40m

FRESH_RELEASE ?= bookworm

.PHONY: test-fresh fresh-make-test

fresh-make-test:
	bash scripts/fresh-make-test.sh $(FRESH_RELEASE)

ifeq ($(shell id -u),0)
test-fresh: dist
	$(GO) test -tags fresh -count=1 -timeout $(FRESH_TIMEOUT) $(if $(RUN),-run '$(RUN)') -v ./test/fresh/
else
test-fresh:
	@echo "test-fresh: NOT RUN: debootstrap, chroot and mount namespaces need root; run 'make test-fresh' as root." >&2
	@if [ -n "$$CI" ]; then echo "test-fresh: CI is set, and CI must run this suite: failing." >&2; exit 1; fi
endif
