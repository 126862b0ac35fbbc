package store

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/test/reporttest"
)

const firstUseEnv = "GPU_PREFLIGHT_TEST_FIRST_USE"

// firstUses are the encodings BenchmarkFirstMarshal times: the two a run
// does (the record's file, the log line and ledger), each against
// encoding/json's reflection encoder on the record's types (reflected, as
// the record's MarshalJSON would call the generated encoder).
var firstUses = map[string]func(r report.Record) ([]byte, error){
	"Marshal":            Marshal,
	"json.MarshalIndent": func(r report.Record) ([]byte, error) { return json.MarshalIndent(reflected(r), "", "  ") },
	"AppendJSON":         func(r report.Record) ([]byte, error) { return r.AppendJSON(nil) },
	"json.Marshal":       func(r report.Record) ([]byte, error) { return json.Marshal(reflected(r)) },
}

// reflected is r's fields without its MarshalJSON method.
type reflected report.Record

// TestFirstUseChild is the child of BenchmarkFirstMarshal: in a fresh
// process it encodes one record, once, the way $GPU_PREFLIGHT_TEST_FIRST_USE
// names, and prints how long that took.
func TestFirstUseChild(t *testing.T) {
	mode := os.Getenv(firstUseEnv)
	if mode == "" {
		t.Skip("the child of BenchmarkFirstMarshal")
	}
	encode, ok := firstUses[mode]
	if !ok {
		t.Fatalf("%s=%q is none of the encodings", firstUseEnv, mode)
	}
	r := report.New(reporttest.Inputs())
	start := time.Now()
	_, err := encode(r)
	d := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("first-use-ns %d\n", d.Nanoseconds())
}

// BenchmarkFirstMarshal measures what encoding a record costs the one time
// a gpu-preflight process does it: encoding/json builds its encoder for
// each struct type on first use, and a process that encodes one record and
// execs would pay that every start; the generated encoder (AppendJSON, and
// Marshal built on it) has nothing to set up. An in-process benchmark
// hides the difference (the encoders are cached after the first round), so
// each round is a fresh child process; the figure is the median of their
// first encodings.
func BenchmarkFirstMarshal(b *testing.B) {
	for _, mode := range []string{"Marshal", "json.MarshalIndent", "AppendJSON", "json.Marshal"} {
		b.Run(mode, func(b *testing.B) {
			var times []time.Duration
			for b.Loop() {
				times = append(times, firstUse(b, mode))
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Nanoseconds())/1e3, "first-µs")
		})
	}
}

// firstUse runs one child and returns the time it printed.
func firstUse(b *testing.B, mode string) time.Duration {
	cmd := exec.Command(os.Args[0], "-test.run=^TestFirstUseChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), firstUseEnv+"="+mode)
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	f := strings.Fields(string(out))
	if len(f) < 2 || f[0] != "first-use-ns" {
		b.Fatalf("child printed %q", out)
	}
	n, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		b.Fatalf("child printed %q", out)
	}
	return time.Duration(n)
}
