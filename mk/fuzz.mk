# Fuzz suite: every fuzz target of every Go module (scripts/fuzz.sh), each
# run for FUZZ_CI_TIME after its checked-in seed corpus
# (<package>/testdata/fuzz/<Target>/, real inputs from the research notes)
# and its f.Add seeds. The corpus files also run as plain unit tests in
# `go test`, so a crasher committed there keeps proving its fix.
#
#   make test-fuzz [FUZZ_CI_TIME=20s]   part of make test
#   make fuzz [FUZZTIME=60s]            the same, longer, by hand (Makefile)
#
# Cost: FUZZ_CI_TIME plus about 1.5 s (build, link, baseline) per target,
# and about 30 s once for the instrumented standard library on a cold Go
# cache: 31 targets at 20s take about 12 minutes.
#
# FUZZ_PARALLEL=N limits each target to N fuzz workers (default: one per CPU).

TEST_SUITES  += test-fuzz
FUZZ_CI_TIME ?= 20s

.PHONY: test-fuzz

test-fuzz:
	GO=$(GO) bash scripts/fuzz.sh $(FUZZ_CI_TIME)
