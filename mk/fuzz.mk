# Fuzz smoke: every fuzz target of every Go module (scripts/fuzz.sh), each
# fuzzed for FUZZ_CI_TIME after its checked-in seed corpus
# (<package>/testdata/fuzz/<Target>/, real inputs) and its f.Add seeds. The
# seeds alone also run in plain `go test` (the unit suite), so a crasher
# committed there keeps proving its fix; this smoke only shows that fuzzing
# each target still starts and finds nothing at once. Long runs are
# `make fuzz` (Makefile), by hand, never in CI.
#
#   make test-fuzz [FUZZ_CI_TIME=1000x]  part of make test (executions or a time: 5s)
#   make fuzz [FUZZTIME=60s]            the long run
#
# Cost: one instrumented test binary per package, then per target the
# baseline over its corpus and FUZZ_CI_TIME: 36 targets at 1000x took 44 s
# on the shared 2-core machine (at 1s each: 143 s, load 13); `go test -fuzz`
# per target at 20s took 12 minutes.
#
# FUZZ_PARALLEL=N limits each target to N fuzz workers (default: one per CPU).

TEST_SUITES  += test-fuzz
FUZZ_CI_TIME ?= 1000x

.PHONY: test-fuzz

test-fuzz:
	GO=$(GO) bash scripts/fuzz.sh $(FUZZ_CI_TIME)
