//go:build journald

// Package journald proves trace against the real journal tools: a small
// fleet's log lines, as a container runtime's journald driver sends them,
// go through Debian's systemd-journal-remote into a journal file, which
// journalctl prints in each output mode; trace reads every one to the
// ledger's answers.
package journald

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/report/trace"
	"github.com/gpu-preflight/gpu-preflight/test/tracetest"
)

// journalRemote is where Debian's systemd-journal-remote package puts the
// tool (it is not on PATH).
const journalRemote = "/lib/systemd/systemd-journal-remote"

func traceOf(t *testing.T, name string, b []byte) trace.Result {
	t.Helper()
	tr := trace.New(trace.Options{})
	if err := tr.Read([]trace.Source{trace.Stream(name, bytes.NewReader(b))})[0]; err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return tr.Result()
}

func answers(r trace.Result) trace.Result {
	r.Sources = nil
	r.Totals = trace.Counts{Records: r.Totals.Records, Outcomes: r.Totals.Outcomes}
	return r
}

func TestJournalctlOutputsGiveTheLedgersAnswers(t *testing.T) {
	for _, tool := range []string{journalRemote, "journalctl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is missing: run make deps (scripts/deps.sh installs systemd-journal-remote)", tool)
		}
	}
	runs := tracetest.SmallFleet()
	want := answers(traceOf(t, "ledger", tracetest.Ledger(runs)))
	without := append(append([]tracetest.Run{}, runs[:tracetest.LongRun]...), runs[tracetest.LongRun+1:]...)
	wantCut := answers(traceOf(t, "ledger", tracetest.Ledger(without)))

	dir := t.TempDir()
	export := filepath.Join(dir, "fleet.export")
	if err := os.WriteFile(export, tracetest.JournalExport(tracetest.Entries(runs, tracetest.LongRun)), 0o644); err != nil {
		t.Fatal(err)
	}
	journal := filepath.Join(dir, "fleet.journal")
	if out, err := exec.Command(journalRemote, "--output="+journal, export).CombinedOutput(); err != nil {
		t.Fatalf("systemd-journal-remote: %v\n%s", err, out)
	}
	for _, mode := range [][]string{{"-o", "json"}, {"-o", "json", "--all"}, {"-o", "json-pretty", "--all"},
		{"-o", "json-seq", "--all"}, {"-o", "export"}, {"-o", "cat"}, {"-o", "short-iso"}, {"-o", "verbose", "--all"}} {
		name := strings.Join(mode, " ")
		t.Run(name, func(t *testing.T) {
			out, err := exec.Command("journalctl", append([]string{"--file", journal, "--no-pager"}, mode...)...).Output()
			if err != nil {
				t.Fatalf("journalctl %s: %v", name, err)
			}
			got := traceOf(t, name, out)
			w := want
			// Without --all the long line's MESSAGE prints as null; in a text
			// mode its parts are lines behind a prefix each: cut, counted, the
			// other runs read.
			if name == "-o json" || mode[1] == "short-iso" || mode[1] == "verbose" {
				if got.Totals.Truncated != 1 {
					t.Errorf("the long line: totals %+v", got.Totals)
				}
				w = wantCut
			}
			if g := answers(got); !reflect.DeepEqual(w, g) {
				wb, _ := json.MarshalIndent(w, "", " ")
				gb, _ := json.MarshalIndent(g, "", " ")
				t.Errorf("journalctl %s gives other answers than the ledger:\nwant %s\ngot  %s", name, wb, gb)
			}
		})
	}
}
