# Fuzz suite: every fuzz target of every Go module (scripts/fuzz.sh), each
# run for FUZZ_CI_TIME after its checked-in seed corpus
# (<package>/testdata/fuzz/<Target>/, real inputs from the research notes)
# and its f.Add seeds. The corpus files also run as plain unit tests in
# `go test`, so a crasher committed there keeps proving its fix.
#
#   make test-fuzz [FUZZ_CI_TIME=20s]   part of make test: 29 targets, about
#                                       11 minutes at 20s on a cold Go cache
#   make fuzz [FUZZTIME=60s]            the same, longer, by hand (Makefile)
#
# FUZZ_PARALLEL=N limits each target to N fuzz workers (default: one per CPU).

TEST_SUITES  += test-fuzz
FUZZ_CI_TIME ?= 20s

.PHONY: test-fuzz

test-fuzz:
	GO=$(GO) bash scripts/fuzz.sh $(FUZZ_CI_TIME)
