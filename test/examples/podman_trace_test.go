//go:build podman

package examples

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/test/tracetest"
)

// testTraceCRI: conmon writes the CRI format (podman's k8s-file log
// driver). Four runs of the example image, supervised as its PID 1: one
// with 1 000 arguments, one whose command exits 3, and one that prints on
// stdout the 40 KiB provenance line of another run, which conmon splits
// into 8 KiB parts. trace reads the four files to the answers of the
// ledger the runs wrote, and does not believe the stdout record.
func testTraceCRI(t *testing.T) {
	dir := t.TempDir()
	prov := filepath.Join(dir, "prov")
	if err := os.Mkdir(prov, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(prov, 0o777)
	forged := tracetest.SmallFleet()[tracetest.LongRun]
	forged.Node = "node-forged"
	long := []string{"python", "-c", "import sys; print(len(sys.argv))"}
	for i := range 1000 {
		long = append(long, fmt.Sprintf("--arg-%d=%s", i, strings.Repeat("v", 40)))
	}
	runs := [][]string{
		{"python", "-c", "print('epoch 1')"},
		long,
		{"python", "-c", "import sys; sys.exit(3)"},
		{"python", "-c", "import sys; print(sys.argv[1])", string(tracetest.LegacyLine(forged))},
	}
	var logs []string
	for i, cmd := range runs {
		name := fmt.Sprintf("gpf-trace-%d-%d", os.Getpid(), i)
		log := filepath.Join(dir, fmt.Sprintf("%d.log", i))
		args := []string{"run", "--name", name, "--network", "none", "--log-driver", "k8s-file", "--log-opt", "path=" + log,
			"-v", prov + ":/var/log/gpu-preflight", "-e", "PREFLIGHT_LEDGER=/var/log/gpu-preflight/runs.jsonl",
			"-e", "PREFLIGHT_JOB_ID=trace-cri", "-e", fmt.Sprintf("NODE_NAME=node-%d", i), exampleImage}
		r := podman(t, 2*time.Minute, append(args, cmd...)...)
		podman(t, time.Minute, "rm", "-f", name)
		if want := map[int]int{2: 3}[i]; r.Code != want {
			t.Fatalf("run %d: exit %d, want %d\n%s", i, r.Code, want, tail(r.Stderr))
		}
		logs = append(logs, log)
	}
	want, _ := traceJSON(t, filepath.Join(prov, "runs.jsonl"))
	if want.Totals.Records != 4 || want.Totals.Outcomes != 4 {
		t.Fatalf("the ledger: %+v", want.Totals)
	}
	got, _ := traceJSON(t, logs...)
	if got.Totals.Stdout != 1 || got.Totals.Malformed != 0 || got.Totals.Truncated != 0 {
		t.Errorf("the CRI logs: %+v", got.Totals)
	}
	for _, s := range got.Sources {
		if !strings.HasPrefix(s.Form, "CRI") {
			t.Errorf("%s read as %q, not as the CRI format", s.Name, s.Form)
		}
	}
	got.Totals.Stdout = 0 // counted, and nothing else of the answers moved
	sameAnswers(t, "conmon's CRI logs", want, got)
}
