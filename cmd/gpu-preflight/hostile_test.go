package main

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/policy"
	"github.com/gpu-preflight/gpu-preflight/report/logs"
	"github.com/gpu-preflight/gpu-preflight/test/schematest"
)

// mib is a value of one mebibyte: eight times what execve(2) lets one
// environment string hold (MAX_ARG_STRLEN, 128 KiB), so it can only reach
// gpu-preflight in process, through run's environ, as here.
var mib = strings.Repeat("x", 1<<20)

// hostileBound is how long one hostile run may take: the preflight of an
// ordinary environment takes milliseconds, and each of these must stay in
// that class, not approach PREFLIGHT_TIMEOUT.
const hostileBound = 3 * time.Second

// maxRecordBytes bounds the record (and so the provenance log line) of a
// hostile run: a normal one is a few KiB.
const maxRecordBytes = 64 << 10

// maxUsageBytes bounds a usage error: one line naming the variable.
const maxUsageBytes = 4 << 10

// binaryJunk is NUL-free bytes that are not UTF-8, with control characters.
var binaryJunk = func() string {
	var b strings.Builder
	for i := 1; i < 256; i++ {
		if i != '=' {
			b.WriteByte(byte(i))
		}
	}
	return b.String() + "\xff\xfe\xc3\x28\xe2\x82"
}()

// hostileRun is one `gpu-preflight check --json` run in process, with an
// empty root (no driver: the NVML probe is not started) and the record
// written to a temporary directory.
type hostileRun struct {
	code           int
	stdout, stderr string
	elapsed        time.Duration
	record         map[string]any
}

func runHostile(t *testing.T, environ []string) hostileRun {
	t.Helper()
	root, prov := t.TempDir(), t.TempDir()
	args := []string{"--provenance-dir", prov, "--root", root, "--host-root", root, "--log-format", "json",
		"--termination-log", filepath.Join(t.TempDir(), "termination-log"), "check", "--json"}
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := run(args, environ, &stdout, &stderr)
	r := hostileRun{code: code, stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	if r.elapsed > hostileBound {
		t.Errorf("the run took %v; want under %v", r.elapsed, hostileBound)
	}
	if code == exitUsage {
		return r
	}
	if err := json.Unmarshal(stdout.Bytes(), &r.record); err != nil {
		t.Fatalf("check --json (exit %d) printed no record: %v\nstderr: %.2000s", code, err, r.stderr)
	}
	data := schematest.ValidateOnlyRecord(t, prov)
	t.Logf("exit %d after %v; record %d bytes; stderr %d bytes", code, r.elapsed, len(data), len(r.stderr))
	return r
}

// logLines checks that stderr is JSON lines, each under logs.MaxLineBytes
// but the provenance line, and returns them.
func logLines(t *testing.T, stderr string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(stderr))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Errorf("log line is not JSON: %v: %.300q", err, sc.Text())
			continue
		}
		if m["message"] != logs.ProvenanceMessage && len(sc.Bytes())+1 > logs.MaxLineBytes {
			t.Errorf("log line of %d bytes (limit %d): %.300s", len(sc.Bytes())+1, logs.MaxLineBytes, sc.Text())
		}
		lines = append(lines, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// findingOf returns the status and message of check id in the record.
func findingOf(rec map[string]any, id string) (status, message string) {
	checks, _ := rec["checks"].([]any)
	for _, c := range checks {
		m, _ := c.(map[string]any)
		if m["id"] == id {
			s, _ := m["status"].(string)
			msg, _ := m["message"].(string)
			return s, msg
		}
	}
	return "", ""
}

func baseEnviron(extra ...string) []string {
	return append([]string{"PATH=/usr/bin:/bin"}, extra...)
}

func TestHostileEnvironments(t *testing.T) {
	manyVars := baseEnviron()
	for i := range 10_000 {
		manyVars = append(manyVars, fmt.Sprintf("JOB_VAR_%d=value-%d", i, i))
	}
	manyRequires := baseEnviron()
	for i := range 10_000 {
		manyRequires = append(manyRequires, fmt.Sprintf("NVIDIA_REQUIRE_X%d=cuda>=11.%d", i, i%9))
	}
	longList := strings.Repeat("/opt/lib:", 1<<17) // 1.1 MiB, 131072 entries
	hundredThousandTerms := strings.Repeat("cuda>=99.0 ", 100_000)

	for _, tc := range []struct {
		name    string
		environ []string
		code    int
		// want: each must appear in a finding's message ("check:ID:text") or
		// a log line's message ("log:text") or, for a usage error, stderr.
		want []string
		// max bounds the record, or stderr for a usage error; 0 means
		// maxRecordBytes or maxUsageBytes.
		max int
	}{
		{name: "10 000 variables", environ: manyVars, code: 0,
			want: []string{"check:driver:no NVIDIA driver found"}},
		{name: "10 000 NVIDIA_REQUIRE_ variables", environ: manyRequires, code: policy.DefaultMismatchExitCode,
			want: []string{"check:cuda-requirement:10000 requirements (NVIDIA_REQUIRE_X0, NVIDIA_REQUIRE_X1, ... NVIDIA_REQUIRE_X9999): nvidia-container-cli takes at most 32"}, max: maxRecordBytes},
		{name: "1 MiB ordinary variable", environ: baseEnviron("JOB_NOTES=" + mib), code: 0,
			want: []string{"check:driver:no NVIDIA driver found"}},
		{name: "1 MiB NVIDIA_VISIBLE_DEVICES", environ: baseEnviron("NVIDIA_VISIBLE_DEVICES=" + mib), code: 0,
			want: []string{"log:NVIDIA_VISIBLE_DEVICES is 1048576 bytes, over the 131072-byte limit"}, max: maxRecordBytes},
		{name: "1 MiB CUDA_VISIBLE_DEVICES", environ: baseEnviron("CUDA_VISIBLE_DEVICES=" + strings.Repeat("0,", 1<<19)), code: 0,
			want: []string{"log:CUDA_VISIBLE_DEVICES is 1048576 bytes, over the 131072-byte limit"}, max: maxRecordBytes},
		{name: "1 MiB NVIDIA_REQUIRE_CUDA", environ: baseEnviron("NVIDIA_REQUIRE_CUDA=" + mib), code: policy.DefaultMismatchExitCode,
			want: []string{"check:cuda-requirement:NVIDIA_REQUIRE_CUDA is 1048576 bytes, over the 131072-byte limit"}, max: maxRecordBytes},
		{name: "NVIDIA_REQUIRE_CUDA of 100 000 terms", environ: baseEnviron("NVIDIA_REQUIRE_CUDA=" + hundredThousandTerms), code: policy.DefaultMismatchExitCode,
			want: []string{"check:cuda-requirement:NVIDIA_REQUIRE_CUDA is 1100000 bytes, over the 131072-byte limit"}, max: maxRecordBytes},
		{name: "1 MiB CUDA_VERSION", environ: baseEnviron("CUDA_VERSION=" + mib), code: policy.DefaultMismatchExitCode,
			want: []string{"check:cuda-requirement:CUDA_VERSION is 1048576 bytes"}, max: maxRecordBytes},
		{name: "1 MiB LD_LIBRARY_PATH and PYTHONPATH", environ: baseEnviron("LD_LIBRARY_PATH="+longList, "PYTHONPATH="+longList), code: 0,
			want: []string{"log:image: LD_LIBRARY_PATH has 131072 directories; the scan looked only in the first 256",
				"log:image: PYTHONPATH has 131072 directories"}, max: maxRecordBytes},
		{name: "1 MiB PREFLIGHT_ variable of the image", environ: baseEnviron("PREFLIGHT_IMAGE_REF=" + mib), code: 0,
			want: []string{"check:driver:no NVIDIA driver found"}, max: maxRecordBytes},
		{name: "1 MiB PREFLIGHT_POLICY", environ: baseEnviron("PREFLIGHT_POLICY=" + mib), code: exitUsage,
			want: []string{"PREFLIGHT_POLICY=", "accepted values are warn, fail, strict"}, max: maxUsageBytes},
		{name: "1 MiB PREFLIGHT_REQUIRE", environ: baseEnviron("PREFLIGHT_REQUIRE=" + mib), code: exitUsage,
			want: []string{"PREFLIGHT_REQUIRE=", "1048576 bytes, over the 131072-byte limit"}, max: maxUsageBytes},
		{name: "binary junk in names and values", environ: baseEnviron(
			binaryJunk+"="+binaryJunk, "NVIDIA_"+binaryJunk+"="+binaryJunk, "CUDA_\xff\xfe=\xc3\x28",
			"NVIDIA_VISIBLE_DEVICES="+binaryJunk, "CUDA_VISIBLE_DEVICES=\xff,\xfe", "LD_LIBRARY_PATH=/\xff:/\xfe"), code: 0,
			want: []string{"log:names MIG devices: keeping the 0 GPUs seen"}},
		{name: "invalid UTF-8 in NVIDIA_REQUIRE_CUDA", environ: baseEnviron("NVIDIA_REQUIRE_CUDA=cuda>=12.\xff brand=\xfe\xc3\x28", "CUDA_VERSION=12.\xff"),
			code: 0, want: []string{"check:cuda-requirement:no NVIDIA driver"}},
		{name: "invalid UTF-8 in CUDA_VERSION", environ: baseEnviron("CUDA_VERSION=12.\xff"), code: policy.DefaultMismatchExitCode,
			want: []string{"check:cuda-requirement:CUDA_VERSION=\"12.\\xff\": not a semantic version"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runHostile(t, tc.environ)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d; stderr: %.1000s", r.code, tc.code, r.stderr)
			}
			if r.code == exitUsage {
				for _, w := range tc.want {
					if !strings.Contains(r.stderr, w) {
						t.Errorf("usage error %.500q does not say %q", r.stderr, w)
					}
				}
				if max := cmp.Or(tc.max, maxUsageBytes); len(r.stderr) > max {
					t.Errorf("usage error of %d bytes, want under %d: the value is copied into it", len(r.stderr), max)
				}
				return
			}
			lines := logLines(t, r.stderr)
			for _, w := range tc.want {
				kind, text, _ := strings.Cut(w, ":")
				found := false
				switch kind {
				case "check":
					id, text, _ := strings.Cut(text, ":")
					_, msg := findingOf(r.record, id)
					found = strings.Contains(msg, text)
					if !found {
						t.Errorf("check %s says %.500q, want %q", id, msg, text)
					}
				case "log":
					for _, l := range lines {
						if m, _ := l["message"].(string); strings.Contains(m, text) {
							found = true
						}
					}
					if !found {
						t.Errorf("no log line says %q:\n%.3000s", text, r.stderr)
					}
				}
			}
			rec, _ := json.Marshal(r.record)
			if max := cmp.Or(tc.max, maxRecordBytes); len(rec) > max {
				t.Errorf("record of %d bytes, want under %d", len(rec), max)
			}
		})
	}
}
