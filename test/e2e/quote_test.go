//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/test/fakenvml"
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

// Credentials next to the listed ones, each as its vendor documents it, in
// a variable's name and value, in free text (SLURM_JOB_COMMENT), in JSON in
// a value and in the command's arguments: none reaches an output or a
// record with the default settings.
func TestCredentialsNextToTheListedOnesAreNotRecorded(t *testing.T) {
	secrets := map[string]string{
		"aws-id":      "AKIAQZTWXKMPLVNRBQ7Z",
		"aws-secret":  "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",
		"github":      "ghp_Nx4QwTz9KmLpVr2XkWq7TzNm3PbVx6KqLw",
		"huggingface": "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",
		"anthropic":   "sk-ant-api03-Kq7TzWx2MpVnLr6KzQw9TxBm3Pvk7WzLq5XtRmZq4Tk8XwMp2VnLr6KzQw9TxBm-Zq4TkAA",
		"openai":      "sk-proj-Tz8KqWx3MpLnVr6KzQw9TxBm3PvNk7WzLq5XtRmZq4Tk8XwMp2VnLr6",
		"wandb":       "0f3c9a8b7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a",
		"ngc":         "bnZhcGktY2xpLWtleS1leGFtcGxlLTAwMDA",
		"url-pass":    "Pw9XqTz4KmLn",
		"query-token": "Qt7WxKz2MpVn",
		"json-key":    "Jk3TzWq8XmLp",
		"bearer":      "Bz6KqWx9TmVpLn",
		"password":    "Ps5TwXk2QzLm",
	}
	prov := t.TempDir()
	env := shimEnv(t, fakeLibrary(t), ptr(fakenvml.H100x8("580.65.06", 13000)), "PREFLIGHT_PROVENANCE_DIR="+prov,
		"NCCL_"+secrets["github"]+"=1",
		"SLURM_JOB_COMMENT=keys "+secrets["aws-id"]+" "+secrets["aws-secret"]+" WANDB_API_KEY="+secrets["wandb"]+" NGC_API_KEY="+secrets["ngc"]+
			" Authorization: Bearer "+secrets["bearer"],
		"PREFLIGHT_IMAGE_SOURCE=https://ml:"+secrets["url-pass"]+"@git.example.com/ml/train.git",
		"TF_CONFIG="+`{"cluster":{},"api_key":"`+secrets["json-key"]+`"}`,
		"PREFLIGHT_LOG_FORMAT=console")
	r := run(t, 30*time.Second, env, shimBin(t), "--", "/bin/sh", "-c", "exit 0",
		secrets["huggingface"], secrets["anthropic"], secrets["openai"], secrets["aws-id"], secrets["aws-secret"],
		"https://x.example/m?token="+secrets["query-token"], "--password="+secrets["password"], "-p", secrets["password"])
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.stderr)
	}
	outputs := r.stdout + r.stderr
	check := run(t, 30*time.Second, env, shimBin(t), "check", "--json")
	outputs += check.stdout + check.stderr
	records, _ := filepath.Glob(filepath.Join(prov, "*.json"))
	for _, p := range records {
		b, _ := os.ReadFile(p)
		outputs += string(b)
	}
	if len(records) == 0 || !strings.Contains(outputs, "[redacted]") {
		t.Fatalf("%d records and no redaction: the probe did not reach the record", len(records))
	}
	for name, s := range secrets {
		if strings.Contains(outputs, s) {
			t.Errorf("%s (%s) is recorded", name, s)
		}
	}
}
