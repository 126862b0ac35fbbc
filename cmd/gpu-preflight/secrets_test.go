package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/test/redacttest"
)

// Planted credentials never reach any output of any gpu-preflight command:
// stdout, stderr (logs), the record files, the ledger, the termination log.
// The secrets sit in the environment (as names and values) and in the
// command's argv, in each form docs/schema/README.md lists.
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

// TestArgvSecretFormsReachNoOutput plants one secret in each argv form that
// leaked before (issue 13, item 7) and runs the shim in every mode: none of
// them may reach the record, the ledger or the log, JSON or console.
func TestArgvSecretFormsReachNoOutput(t *testing.T) {
	forms := [][]string{
		{"-p", "S3cretShortP"},
		{"bash -c 'python train.py --token S3cretInCmdLine'"},
		{"--lr=0.1 --hf_token=S3cretTwoFlags"},
		{"--dsn", "host=db user=u password=S3cretDSN"},
		{"https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Security-Token=S3cretPresigned&X-Amz-Expires=60"},
		{"s3://AKIAIOSFODNN7EXAMPLE:S3cretSlash/with/slashes@bucket/key"},
		{"https://u:S3cretHash#x@host/"},
		{"--set=training.password=S3cretNested"},
		{"--user", "admin:S3cretUser"},
		{"--pass", "S3cretPass"},
		{"--passphrase", "S3cretPassphrase"},
		{`--config={"token": "S3cretJSON"}`},
	}
	argv := []string{"true"}
	for _, f := range forms {
		argv = append(argv, f...)
	}
	dir := t.TempDir()
	prov, ledger := filepath.Join(dir, "prov"), filepath.Join(dir, "runs.jsonl")
	outputs := map[string]string{}
	for _, mode := range []struct{ name, supervise, format string }{
		{"exec-json", "false", "json"}, {"supervise-json", "true", "json"}, {"exec-console", "false", "console"},
	} {
		cmd := exec.Command(shimPath, append([]string{"--"}, argv...)...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "PREFLIGHT_PROVENANCE_DIR=" + prov, "PREFLIGHT_LEDGER=" + ledger,
			"PREFLIGHT_SUPERVISE=" + mode.supervise, "PREFLIGHT_LOG_FORMAT=" + mode.format, "PREFLIGHT_LOG_LEVEL=debug",
			"PREFLIGHT_TERMINATION_LOG="}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", mode.name, err, out)
		}
		outputs[mode.name] = string(out)
	}
	files, _ := filepath.Glob(filepath.Join(prov, "*.json"))
	if len(files) != 3 {
		t.Fatalf("%d records, want 3", len(files))
	}
	for _, f := range append(files, ledger) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		outputs[f] = string(data)
	}
	if !strings.Contains(outputs[ledger], "admin:[redacted]") {
		t.Fatalf("the ledger does not hold the redacted argv this test reads:\n%s", outputs[ledger])
	}
	for name, out := range outputs {
		if i := strings.Index(out, "S3cret"); i >= 0 {
			t.Errorf("%s holds a planted secret: ...%s...", name, out[max(0, i-60):min(len(out), i+30)])
		}
	}
}

// TestArgvCorpusReachesNoOutput runs the shim on every form of the
// secrets corpus (test/redacttest), exec'ing and supervising the
// command, with the debug log: neither a credential nor a piece of one
// reaches stdout, stderr, the record file or the ledger, and the recorded
// argv still holds the program and the flags that name the command. The
// programs are links to true(1) on the command's PATH, so each form runs
// as written and prints nothing itself.
func TestArgvCorpusReachesNoOutput(t *testing.T) {
	bin := t.TempDir()
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range redacttest.Forms {
		link := filepath.Join(bin, f.Argv[0])
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink(truePath, link); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range redacttest.Forms {
		t.Run(f.Name, func(t *testing.T) {
			leaks, argvs := corpusRun(t, bin, f)
			if len(leaks) > 0 {
				t.Fatalf("%q reached an output:\n%s", f.Secrets, strings.Join(leaks, "\n"))
			}
			for _, c := range argvs {
				if c.ArgvSHA256 != report.ArgvDigest(f.Argv) {
					t.Errorf("argvSha256 %q, want the digest of the argv as given, the same in every run", c.ArgvSHA256)
				}
				for _, k := range f.Keep {
					if !slices.Contains(c.Argv, k) {
						t.Errorf("the recorded argv %q lost %q: the command is no longer identifiable", c.Argv, k)
					}
				}
			}
		})
	}
}

// corpusRun runs form f under the shim, exec'd and supervised, and returns
// where a secret leaked ("output: piece") and the command of every record.
func corpusRun(t *testing.T, bin string, f redacttest.Form) (leaks []string, commands []report.Command) {
	t.Helper()
	dir := t.TempDir()
	prov, ledger := filepath.Join(dir, "prov"), filepath.Join(dir, "runs.jsonl")
	outputs := map[string]string{}
	for _, supervise := range []string{"false", "true"} {
		cmd := exec.Command(shimPath, append([]string{"--"}, f.Argv...)...)
		cmd.Env = []string{"PATH=" + bin, "PREFLIGHT_PROVENANCE_DIR=" + prov, "PREFLIGHT_LEDGER=" + ledger,
			"PREFLIGHT_SUPERVISE=" + supervise, "PREFLIGHT_LOG_FORMAT=json", "PREFLIGHT_LOG_LEVEL=debug",
			"PREFLIGHT_TERMINATION_LOG="}
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("supervise=%s: %v\n%s", supervise, err, stderr.String())
		}
		outputs["stdout (supervise="+supervise+")"] = stdout.String()
		outputs["stderr (supervise="+supervise+")"] = stderr.String()
	}
	files, _ := filepath.Glob(filepath.Join(prov, "*.json"))
	if len(files) != 2 {
		t.Fatalf("%d records, want 2", len(files))
	}
	for _, p := range append(files, ledger) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		outputs[filepath.Base(p)] = string(data)
	}
	for _, p := range files {
		var rec report.Record
		if err := json.Unmarshal([]byte(outputs[filepath.Base(p)]), &rec); err != nil {
			t.Fatal(err)
		}
		commands = append(commands, rec.Command)
	}
	for name, out := range outputs {
		for _, piece := range redacttest.Leaks(out, f.Secrets) {
			leaks = append(leaks, name+": "+piece)
		}
	}
	return leaks, commands
}

// PREFLIGHT_RECORD_ARGV: digest and none keep every argument out of every
// output, none the digest too, full keeps them; and with
// PREFLIGHT_LOG_PROVENANCE=false no record reaches the log, the finished
// one of a supervised run included (issue 24).
func TestRecordArgvModesAndLogProvenanceOff(t *testing.T) {
	const word = "Qz7uniqueWordKx4"
	argv := []string{"true", "--run-name", word}
	for _, tt := range []struct {
		mode, logProvenance string
		inRecord, inLog     bool
	}{
		{"redacted", "true", true, false},
		{"full", "true", true, false},
		{"digest", "true", false, false},
		{"none", "true", false, false},
		{"redacted", "false", true, false},
		{"full", "false", true, false},
	} {
		for _, supervise := range []string{"false", "true"} {
			name := tt.mode + "/log=" + tt.logProvenance + "/supervise=" + supervise
			dir := t.TempDir()
			prov, ledger := filepath.Join(dir, "prov"), filepath.Join(dir, "runs.jsonl")
			cmd := exec.Command(shimPath, append([]string{"--"}, argv...)...)
			cmd.Env = []string{"PATH=/usr/bin:/bin", "PREFLIGHT_PROVENANCE_DIR=" + prov, "PREFLIGHT_LEDGER=" + ledger,
				"PREFLIGHT_SUPERVISE=" + supervise, "PREFLIGHT_LOG_FORMAT=json", "PREFLIGHT_LOG_LEVEL=debug",
				"PREFLIGHT_TERMINATION_LOG=", "PREFLIGHT_RECORD_ARGV=" + tt.mode, "PREFLIGHT_LOG_PROVENANCE=" + tt.logProvenance}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", name, err, out)
			}
			files, _ := filepath.Glob(filepath.Join(prov, "*.json"))
			if len(files) != 1 {
				t.Fatalf("%s: %d records", name, len(files))
			}
			data, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			var rec report.Record
			if err := json.Unmarshal(data, &rec); err != nil {
				t.Fatal(err)
			}
			if supervise == "true" && rec.Outcome == nil {
				t.Errorf("%s: the record was not finished", name)
			}
			lines, _ := os.ReadFile(ledger)
			if got := strings.Contains(string(data), word) && strings.Contains(string(lines), word); got != tt.inRecord {
				t.Errorf("%s: the argument in the record and the ledger: %v, want %v\n%s", name, got, tt.inRecord, data)
			}
			if got := strings.Contains(string(out), word); got != tt.inLog {
				t.Errorf("%s: the argument in the log: %v, want %v\n%s", name, got, tt.inLog, out)
			}
			if provLines := strings.Count(string(out), `"message":"provenance"`); (provLines > 0) != (tt.logProvenance == "true") {
				t.Errorf("%s: %d provenance lines with PREFLIGHT_LOG_PROVENANCE=%s\n%s", name, provLines, tt.logProvenance, out)
			}
			wantDigest := report.ArgvDigest(argv)
			if tt.mode == "none" {
				wantDigest = ""
			}
			if rec.Command.ArgvSHA256 != wantDigest || rec.Command.ArgvRecord != tt.mode {
				t.Errorf("%s: argvSha256 %q argvRecord %q", name, rec.Command.ArgvSHA256, rec.Command.ArgvRecord)
			}
		}
	}
}

// Each issuer's token (test/redacttest.Tokens) as the value of an
// allow-listed variable and inside SLURM_JOB_COMMENT's free text reaches no
// output, exec'd, supervised, aborted, or logged to a console: the
// record, the ledger, the log, stdout and the termination message. The
// corpus test above carries each on the command line.
func TestTokenFormatsInTheEnvironmentReachNoOutput(t *testing.T) {
	root := driverRoot(t, "515.65.01")
	dir := t.TempDir()
	prov, ledger, term := filepath.Join(dir, "prov"), filepath.Join(dir, "runs.jsonl"), filepath.Join(dir, "termination-log")
	env := []string{"PATH=/usr/bin:/bin", "PREFLIGHT_ROOT=" + root, "PREFLIGHT_HOST_ROOT=" + root, "PREFLIGHT_PROVENANCE_DIR=" + prov,
		"PREFLIGHT_LEDGER=" + ledger, "PREFLIGHT_TERMINATION_LOG=" + term, "PREFLIGHT_LOG_LEVEL=debug"}
	var secrets, comment []string
	for i, tok := range redacttest.Tokens {
		secrets = append(secrets, tok.Secret)
		comment = append(comment, "key "+tok.Value()+";")
		env = append(env, fmt.Sprintf("NCCL_NOTE_%d=%s", i, tok.Value()))
	}
	env = append(env, "SLURM_JOB_COMMENT=nightly sweep, "+strings.Join(comment, " "))
	outputs := map[string]string{}
	for _, r := range []struct{ name, extra string }{
		{"exec", "PREFLIGHT_POLICY=warn"}, {"supervise", "PREFLIGHT_SUPERVISE=true"}, {"console", "PREFLIGHT_LOG_FORMAT=console"},
		{"abort", "NVIDIA_REQUIRE_CUDA=" + require118},
	} {
		cmd := exec.Command(shimPath, "--", "true")
		cmd.Env = append(slices.Clone(env), r.extra)
		if r.name != "abort" {
			cmd.Env = append(cmd.Env, "PREFLIGHT_POLICY=warn")
		}
		out, _ := cmd.CombinedOutput()
		outputs[r.name] = string(out)
	}
	files, _ := filepath.Glob(filepath.Join(prov, "*.json"))
	for _, f := range append(files, ledger, term) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		outputs[filepath.Base(f)] = string(data)
	}
	if len(files) != 4 || !strings.Contains(outputs[filepath.Base(files[0])], `"SLURM_JOB_COMMENT": "nightly sweep, key [redacted]; key [redacted];`) {
		t.Fatalf("%d records, want 4 holding the redacted comment:\n%s", len(files), outputs["exec"])
	}
	for name, out := range outputs {
		if l := redacttest.Leaks(out, secrets); len(l) > 0 {
			t.Errorf("%s holds %q", name, l)
		}
	}
}
