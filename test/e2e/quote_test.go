//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A credential planted as cuda.version in /usr/local/cuda/version.json (and
// as the CUDA Version of version.txt) is named by its file and length in
// the malformed-version warning, never echoed: not in the report, the log,
// the record or the termination message.
func TestMalformedVersionFileIsNamedNotEchoed(t *testing.T) {
	const secret = "s3cr3t-Pa55w0rd-no-known-form-4f9c"
	for file, content := range map[string]string{
		"version.json": `{"cuda":{"name":"CUDA SDK","version":"` + secret + `"}}`,
		"version.txt":  "CUDA Version " + secret + "\n",
	} {
		t.Run(file, func(t *testing.T) {
			prov := t.TempDir()
			env := shimEnv(t, fakeLibrary(t), ptr(hostileNode()), "PREFLIGHT_PROVENANCE_DIR="+prov,
				"NVIDIA_REQUIRE_CUDA=cuda>=99.0", "PREFLIGHT_POLICY=strict")
			dir := filepath.Join(envValue(env, "PREFLIGHT_ROOT"), "usr/local/cuda")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			report := run(t, 30*time.Second, env, shimBin(t), "check")
			exec := run(t, 30*time.Second, env, shimBin(t), "--", "true")
			term, _ := os.ReadFile(envValue(env, "PREFLIGHT_TERMINATION_LOG"))
			outputs := report.stdout + report.stderr + exec.stdout + exec.stderr + string(term)
			records, _ := filepath.Glob(filepath.Join(prov, "*.json"))
			for _, p := range records {
				b, _ := os.ReadFile(p)
				outputs += string(b)
			}
			if len(records) == 0 || exec.code != 78 {
				t.Fatalf("exit %d, %d records: want 78 and a record", exec.code, len(records))
			}
			want := "/usr/local/cuda/" + file + ": "
			if !strings.Contains(report.stdout, want) || !strings.Contains(report.stdout, "(34 bytes) is not X.Y[.Z]") {
				t.Errorf("the report does not name %s and the value's length:\n%s", want, report.stdout)
			}
			if strings.Contains(outputs, secret) || strings.Contains(outputs, secret[:12]) {
				t.Errorf("the file's content is echoed:\n%s", outputs)
			}
		})
	}
}
