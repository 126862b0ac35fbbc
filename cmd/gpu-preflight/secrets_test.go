package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Planted credentials never reach any output of any gpu-preflight command:
// stdout, stderr (logs), the record files, the ledger, the termination log.
// The secrets sit in the environment (as names and values) and in the
// command's argv, in each form SPEC section 6 lists.
func TestNoPlantedSecretReachesAnyCommandOutput(t *testing.T) {
	secrets := []string{"AKIAsecretvalue0001", "hf_secretvalue0002", "hunter2", "u:p@", "pw-in-url-0003", "tokvalue0004"}
	root := driverRoot(t, "515.65.01")
	dir := t.TempDir()
	prov := filepath.Join(dir, "prov")
	ledger := filepath.Join(dir, "runs.jsonl")
	term := filepath.Join(dir, "termination-log")
	env := []string{
		"PATH=/usr/bin:/bin",
		"PREFLIGHT_ROOT=" + root,
		"PREFLIGHT_HOST_ROOT=" + root,
		"PREFLIGHT_PROVENANCE_DIR=" + prov,
		"PREFLIGHT_LEDGER=" + ledger,
		"PREFLIGHT_TERMINATION_LOG=" + term,
		"PREFLIGHT_LOG_LEVEL=debug",
		"NVIDIA_REQUIRE_CUDA=" + require118,
		"AWS_SECRET_ACCESS_KEY=AKIAsecretvalue0001",
		"HF_TOKEN=hf_secretvalue0002",
		"NCCL_SOCKET_IFNAME=https://admin:pw-in-url-0003@example.invalid/x",
		"CUDA_MY_TOKEN=tokvalue0004",
	}
	argv := []string{"true", "--password=hunter2", "--token", "tokvalue0004", "PASSWORD=hunter2", "https://u:p@host/x"}
	runs := []struct {
		name string
		args []string
		env  []string
	}{
		{"abort", append([]string{"--"}, argv...), nil},
		{"exec", append([]string{"--"}, argv...), []string{"PREFLIGHT_POLICY=warn"}},
		{"supervise", append([]string{"--"}, argv...), []string{"PREFLIGHT_POLICY=warn", "PREFLIGHT_SUPERVISE=true"}},
		{"check", []string{"check"}, nil},
		{"check-json", []string{"check", "--json"}, nil},
		{"console-log", append([]string{"--"}, argv...), []string{"PREFLIGHT_POLICY=warn", "PREFLIGHT_LOG_FORMAT=console"}},
		{"explain", []string{"explain"}, nil},
		{"missing-command", []string{"--", "no-such-command-xyz", "--password=hunter2"}, []string{"PREFLIGHT_POLICY=warn"}},
	}
	outputs := map[string]string{}
	for _, r := range runs {
		cmd := exec.Command(shimPath, r.args...)
		cmd.Env = append(append([]string{}, env...), r.env...)
		out, _ := cmd.CombinedOutput()
		outputs[r.name] = string(out)
	}
	files, _ := filepath.Glob(filepath.Join(prov, "*"))
	if len(files) < 5 {
		t.Fatalf("%d records written, want one per run", len(files))
	}
	diffCmd := exec.Command(shimPath, "diff", prov)
	diffOut, _ := diffCmd.CombinedOutput()
	outputs["diff"] = string(diffOut)
	for _, f := range append(files, ledger, term) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		outputs[f] = string(data)
	}
	if !strings.Contains(outputs[term], "cuda-requirement") || !strings.Contains(outputs["check-json"], "[redacted]") {
		t.Fatalf("the runs did not produce what this test reads:\ntermination: %s\ncheck --json: %s", outputs[term], outputs["check-json"])
	}
	for name, out := range outputs {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("%s contains the planted secret %q", name, s)
			}
		}
	}
}
