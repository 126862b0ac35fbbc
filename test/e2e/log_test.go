//go:build e2e

package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/test/fakenvml"
)

// stderrLines splits the shim's stderr into lines and sets the provenance
// line apart (JSON: "message":"provenance"; console: "INF provenance ...").
func stderrLines(t *testing.T, stderr string) (lines []string, provenance int) {
	t.Helper()
	for _, l := range strings.Split(strings.TrimRight(stderr, "\n"), "\n") {
		if strings.Contains(l, `"message":"provenance"`) || strings.Contains(l, " INF provenance ") {
			provenance++
			continue
		}
		lines = append(lines, l)
	}
	return lines, provenance
}

// A passing run on 8 GPUs writes at most 3 lines besides the provenance
// line, in JSON and in console format, and the first is the summary that
// names the GPUs, the driver and its CUDA, the image's CUDA and the
// verdict. PREFLIGHT_LOG_PROVENANCE=false drops the provenance line.
func TestLogPassingRunOnEightGPUsIsShort(t *testing.T) {
	for _, format := range []string{"json", "console"} {
		t.Run(format, func(t *testing.T) {
			env := shimEnv(t, fakeLibrary(t), ptr(fakenvml.H100x8("550.54.15", 12040)),
				"NVIDIA_REQUIRE_CUDA="+requireCUDA(t, "12.8.1"), "PREFLIGHT_LOG_FORMAT="+format)
			r := run(t, 30*time.Second, env, shimBin(t), "--", "sh", "-c", "echo ran")
			if r.code != 0 || r.stdout != "ran\n" {
				t.Fatalf("exit %d, stdout %q\nstderr: %s", r.code, r.stdout, r.stderr)
			}
			lines, prov := stderrLines(t, r.stderr)
			if prov != 1 || len(lines) > 3 {
				t.Errorf("%d lines besides %d provenance line(s), want at most 3 and 1:\n%s", len(lines), prov, r.stderr)
			}
			if len(lines) == 0 {
				t.Fatal("no summary line")
			}
			for _, want := range []string{"8x NVIDIA H100", "driver 550.54.15 (CUDA 12.4)", "image CUDA", ": ok", " ms"} {
				if !strings.Contains(lines[0], want) {
					t.Errorf("the first line does not say %q:\n%s", want, lines[0])
				}
			}
			if format == "json" {
				var m map[string]any
				if err := json.Unmarshal([]byte(lines[0]), &m); err != nil || m["event"] != "summary" || m["gpus"] != 8.0 {
					t.Errorf("the summary line is not a JSON summary event (%v): %s", err, lines[0])
				}
			} else if strings.Contains(lines[0], "driverCuda=") {
				t.Errorf("the console summary repeats its fields: %s", lines[0])
			}

			off := run(t, 30*time.Second, append(env, "PREFLIGHT_LOG_PROVENANCE=false"), shimBin(t), "--", "true")
			if lines, prov := stderrLines(t, off.stderr); off.code != 0 || prov != 0 || len(lines) > 3 {
				t.Errorf("PREFLIGHT_LOG_PROVENANCE=false: exit %d, %d provenance line(s), %d others:\n%s", off.code, prov, len(lines), off.stderr)
			}
		})
	}
}

// An abort's last stderr line, the one docker logs, kubectl logs and a
// Slurm .out end with, is the reason and the fix in one sentence; in JSON
// a JSON line whose message is that sentence.
func TestLogAbortEndsWithTheReason(t *testing.T) {
	for _, format := range []string{"json", "console"} {
		t.Run(format, func(t *testing.T) {
			env := shimEnv(t, fakeLibrary(t), ptr(fakenvml.H100x8("545.23.08", 12030)),
				"NVIDIA_REQUIRE_CUDA="+requireCUDA(t, "12.8.1"), "PREFLIGHT_LOG_FORMAT="+format)
			r := run(t, 30*time.Second, env, shimBin(t), "--", "true")
			if r.code != abortCode {
				t.Fatalf("exit %d, want %d\nstderr: %s", r.code, abortCode, r.stderr)
			}
			all := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
			last := all[len(all)-1]
			msg := last
			if format == "json" {
				var m map[string]any
				if err := json.Unmarshal([]byte(last), &m); err != nil || m["event"] != "abort" || m["level"] != "error" {
					t.Fatalf("the last line is not a JSON abort event (%v): %s", err, last)
				}
				msg = m["message"].(string)
			}
			for _, want := range []string{"exit 78", "cuda-requirement", "545.23.08", "570.26", "fix: upgrade the driver"} {
				if !strings.Contains(msg, want) {
					t.Errorf("the last line does not say %q:\n%s", want, last)
				}
			}
			if !strings.HasSuffix(msg, ".") {
				t.Errorf("the reason does not end as a sentence: %s", msg)
			}
		})
	}
}
