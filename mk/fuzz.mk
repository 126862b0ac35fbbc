# Fuzz smoke: every fuzz target of every Go module (scripts/fuzz.sh), each
# fuzzed for FUZZ_CI_TIME after its checked-in seed corpus
# (<package>/testdata/fuzz/<Target>/, real inputs) and its f.Add seeds. The
# seeds alone also run in plain `go test` (the unit suite), so a crasher
# committed there keeps proving its fix; this smoke only shows that fuzzing
# each target still starts and finds nothing at once. Long runs are
# `make fuzz` (Makefile), by hand, never in CI.
#
#   make test-fuzz [FUZZ_CI_TIME=1s]    part of make test
#   make fuzz [FUZZTIME=60s]            the long run
#
# Cost: one instrumented test binary per package, then FUZZ_CI_TIME plus
# about 0.1 s per target: 31 targets at 1s took 75 s on the shared 2-core
# machine (load 9), where `go test -fuzz` per target at 20s took 12 minutes.
#
# FUZZ_PARALLEL=N limits each target to N fuzz workers (default: one per CPU).

TEST_SUITES  += test-fuzz
FUZZ_CI_TIME ?= 1s

.PHONY: test-fuzz

test-fuzz:
	GO=$(GO) bash scripts/fuzz.sh $(FUZZ_CI_TIME)
