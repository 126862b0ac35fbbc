//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/test/figures"
	"github.com/gpu-preflight/gpu-preflight/test/harness"
)

// The figures README.md quotes about the binary, its memory and its
// start-up (its figures table) are what the built binary and
// bench/startup give now, each within its documented noise: sizes, and
// ratios of times from one interleaved run, which a loaded machine
// stretches alike. bench/startup runs as the table says, with fewer
// rounds: the bare exec, tini, the Go exec-only program and the
// gpu-preflight rows the figures come from, interleaved.
func TestQuotedFiguresHold(t *testing.T) {
	quoted := figures.Quoted(t)
	shim := shimBin(t)
	st, err := os.Stat(shim)
	if err != nil {
		t.Fatal(err)
	}
	quoted["binary"].Check(t, float64(st.Size())/(1<<20))

	for _, tool := range []string{"tini", "/usr/bin/time", "gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is missing (make deps installs it): bench/startup needs it", tool)
		}
	}
	cmd := exec.Command("go", "run", "./bench/startup", "-runs", "100", "-warmup", "10", "-bin", filepath.Dir(shim),
		"-cases", `^gpu-preflight, (no GPU|fake NVML x8|fake NVML x1|fake NVML\+CUDA x1, CUDA check kernel), provenance off$`)
	cmd.Dir = harness.Root(t)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bench/startup: %v\n%s", err, out)
	}
	t.Logf("bench/startup took %v:\n%s", time.Since(start).Round(time.Millisecond), out)
	rows := benchRows(t, string(out))
	floor := rows["gpu-preflight, no GPU, provenance off"]
	probe := rows["gpu-preflight, fake NVML x8, provenance off"]
	one := rows["gpu-preflight, fake NVML x1, provenance off"]
	cuda := rows["gpu-preflight, fake NVML+CUDA x1, CUDA check kernel, provenance off"]
	if floor == nil || probe == nil || one == nil || cuda == nil {
		t.Fatalf("bench/startup printed no row for the GPU-less, the fake NVML x8 or x1, or the CUDA kernel case:\n%s", out)
	}
	quoted["startup-go"].Check(t, floor[colAddedGo])
	quoted["rss"].Check(t, floor[colRSS])
	quoted["rss-probe"].Check(t, probe[colRSS])
	quoted["cuda-cpu"].Check(t, cuda[colCPU]/one[colCPU])
	quoted["rss-cuda"].Check(t, cuda[colRSS])
}

// Columns of bench/startup's start-up table, after the case's name.
const (
	colMedian = iota
	colXBare
	colAdded
	colAddedGo
	colAddedTini
	colCPU
	colRSS
	benchColumns
)

// benchRows reads bench/startup's start-up table: each case's numbers by
// its name ("-" reads as 0).
func benchRows(t *testing.T, out string) map[string][]float64 {
	t.Helper()
	rows := map[string][]float64{}
	for _, line := range strings.Split(out, "\n") {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) != 1+benchColumns {
			continue
		}
		var nums []float64
		for _, c := range cells[1:] {
			c = strings.TrimSpace(c)
			if c == "-" {
				nums = append(nums, 0)
				continue
			}
			v, err := strconv.ParseFloat(c, 64)
			if err != nil {
				nums = nil
				break
			}
			nums = append(nums, v)
		}
		if nums != nil {
			rows[strings.TrimSpace(cells[0])] = nums
		}
	}
	return rows
}
