package store

import (
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

// TestFirstUseChild is the child of BenchmarkFirstMarshal: in a fresh
// process it encodes one record as Marshal does, once, and prints how long
// that took.
func TestFirstUseChild(t *testing.T) {
	if os.Getenv(firstUseEnv) == "" {
		t.Skip("the child of BenchmarkFirstMarshal")
	}
	r := report.New(reporttest.Inputs())
	start := time.Now()
	_, err := Marshal(r)
	d := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("first-use-ns %d\n", d.Nanoseconds())
}

// BenchmarkFirstMarshal measures what encoding a record costs the one time
// a gpu-preflight process does it: encoding/json builds its encoder for
// each struct type on first use, and a process that encodes one record and
// execs pays that every start. An in-process benchmark hides it (the
// encoders are cached after the first round), so each round is a fresh
// child process; the figure is the median of their first encodings.
func BenchmarkFirstMarshal(b *testing.B) {
	var times []time.Duration
	for b.Loop() {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFirstUseChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), firstUseEnv+"=1")
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
		times = append(times, time.Duration(n))
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds())/1e3, "first-µs")
}
