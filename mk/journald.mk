# The journal suite (test/journald, build tag journald): a small fleet's
# log lines, as a container runtime's journald driver sends them, go
# through Debian's systemd-journal-remote into a journal file that
# journalctl prints in each output mode, and trace reads every one to the
# ledger's answers. Needs no root; the tools come with make deps.
#
#   make test-journald [RUN=regexp]

TEST_SUITES     += test-journald
JOURNALD_TIMEOUT ?= 5m

.PHONY: test-journald

test-journald:
	$(GO) test -tags journald -count=1 -timeout $(JOURNALD_TIMEOUT) $(if $(RUN),-run '$(RUN)') -v ./test/journald/
