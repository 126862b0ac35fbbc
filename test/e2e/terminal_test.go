//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gpu-preflight/gpu-preflight/report/trace/provline"
	"github.com/gpu-preflight/gpu-preflight/test/fakenvml"
)

// Issue 39's probes: a GPU name from the driver and torch's version from
// its version.py, each with an OSC that retitles the terminal and a CSI that
// clears it, the name also with a right-to-left override; and format
// characters (zero-width space, LRI, ALM, BOM, soft hyphen) in a requirement.
const (
	gpuNameProbe      = "NVIDIA H100\x1b]0;PWNED\x07\x1b[2J\u202e"
	torchVersionProbe = "2.9.0+cu130\x1b]0;PWNED\x07\x1b[2J"
	formatProbe       = "\u200b\u2066\u061c\ufeff\u00ad"
)

// hostileNode is 8 H100s on 580.65.06 whose NVML names are gpuNameProbe.
func hostileNode() fakenvml.Scenario {
	s := fakenvml.H100x8("580.65.06", 13000)
	for _, g := range s.GPUs {
		g["name"] = gpuNameProbe
	}
	return s
}

// torchProbe writes torch 2.9.0+cu130 into root, version.py as torch's
// tools/generate_torch_version.py writes it but for the probe in
// __version__.
func torchProbe(t *testing.T, root string) {
	t.Helper()
	sp := filepath.Join(root, e2eSP)
	for p, s := range map[string]string{
		"torch/version.py": "from typing import Optional\n__version__ = '" + torchVersionProbe + "'\ndebug = False\n" +
			"cuda: Optional[str] = '13.0'\nhip: Optional[str] = None\n",
		"torch-2.9.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: torch\nVersion: 2.9.0\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(sp, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sp, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// wantTerminalSafe fails unless out holds nothing a terminal acts on or
// does not show: no control character but the line feed (Unicode Cc: C0,
// DEL, C1), no format character (Cf), no line or paragraph separator, no
// default-ignorable filler, no byte that is not UTF-8, no more than 30
// combining marks in a row; and unless it shows each of the escapes in want.
func wantTerminalSafe(t *testing.T, what, out string, want ...string) {
	t.Helper()
	marks := 0
	for i, r := range out {
		if marks = marks + 1; !unicode.In(r, unicode.Mn, unicode.Me) {
			marks = 0
		}
		if r == utf8.RuneError && !strings.HasPrefix(out[i:], "\ufffd") || marks > 30 ||
			r != '\n' && unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Other_Default_Ignorable_Code_Point) {
			line := strings.Count(out[:i], "\n") + 1
			t.Errorf("%s: line %d holds %q raw:\n%q", what, line, out[i:i+max(1, utf8.RuneLen(r))], strings.Split(out, "\n")[line-1])
			return
		}
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s does not show %s:\n%s", what, w, out)
		}
	}
}

func TestExplainShowsTheProbesEscaped(t *testing.T) {
	env := shimEnv(t, fakeLibrary(t), ptr(hostileNode()),
		"NVIDIA_REQUIRE_CUDA=cuda>=99.0 brand=nvidia"+formatProbe+",driver>=580 brand=tesla\x1b]0;PWNED\x07,driver>=580\u202e")
	r := run(t, 30*time.Second, env, shimBin(t), "explain")
	if r.code != 1 || !strings.Contains(r.stdout, "8 visible GPU(s)") {
		t.Fatalf("explain exit %d, want 1 (no term holds) on 8 GPUs:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	wantTerminalSafe(t, "explain", r.stdout+r.stderr, `brand=nvidia\u200b\u2066\u061c\ufeff\u00ad`, `brand=tesla\x1b]0;PWNED\x07`,
		`GPU 0 (NVIDIA H100\x1b]0;PWNED\x07\x1b[2J\u202e, brand Nvidia`)

	arg := run(t, 30*time.Second, env, shimBin(t), "explain", "cuda>=12"+formatProbe+"\x1b]0;PWNED\x07\x1b[2J\u202e")
	if arg.code != 64 {
		t.Errorf("explain of an invalid argument exit %d, want 64:\n%s", arg.code, arg.stdout)
	}
	wantTerminalSafe(t, "explain with an argument", arg.stdout+arg.stderr, `\x1b]0;PWNED\x07\x1b[2J\u202e`)
}

func TestAffinityShowsTheProbesEscaped(t *testing.T) {
	env := shimEnv(t, fakeLibrary(t), ptr(hostileNode()))
	root := envValue(env, "PREFLIGHT_ROOT")
	torchProbe(t, root)
	r := run(t, 30*time.Second, env, shimBin(t), "affinity", "--root", root)
	if r.code != 0 || !strings.Contains(r.stdout, "1 framework(s)") || !strings.Contains(r.stdout, "nodeAffinity:") {
		t.Fatalf("affinity exit %d, want the torch image's affinity:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	wantTerminalSafe(t, "affinity", r.stdout+r.stderr)
}

// probedRecords writes two records of one node to a provenance folder, the
// second after its GPUs and torch took the probes, and returns the folder and
// the second run's environment and check --json output.
func probedRecords(t *testing.T) (prov string, env []string, checkJSON string) {
	prov = t.TempDir()
	for _, s := range []fakenvml.Scenario{fakenvml.H100x8("580.65.06", 13000), hostileNode()} {
		env = shimEnv(t, fakeLibrary(t), &s, "PREFLIGHT_PROVENANCE_DIR="+prov, "PREFLIGHT_POLICY=warn")
		if s.GPUs[0]["name"] == gpuNameProbe {
			torchProbe(t, envValue(env, "PREFLIGHT_ROOT"))
		}
		r := run(t, 30*time.Second, env, shimBin(t), "check", "--json")
		if r.code != 0 {
			t.Fatalf("check exit %d:\n%s", r.code, r.stderr)
		}
		checkJSON = r.stdout
	}
	return prov, env, checkJSON
}

// trace, in text and JSON, shows a job's GPU names escaped when two of its
// ranks saw different ones.
func TestTraceShowsTheProbesEscaped(t *testing.T) {
	prov := t.TempDir()
	for rank, s := range []fakenvml.Scenario{fakenvml.H100x8("580.65.06", 13000), hostileNode()} {
		env := shimEnv(t, fakeLibrary(t), &s, "PREFLIGHT_PROVENANCE_DIR="+prov, "PREFLIGHT_POLICY=warn",
			"SLURM_JOB_ID=4242", "SLURM_NTASKS=2", fmt.Sprintf("SLURM_PROCID=%d", rank), fmt.Sprintf("SLURMD_NODENAME=node-%d", rank))
		if r := run(t, 30*time.Second, env, shimBin(t), "--", "true"); r.code != 0 {
			t.Fatalf("exit %d:\n%s", r.code, r.stderr)
		}
	}
	text := run(t, 30*time.Second, []string{"PATH=/usr/bin:/bin"}, shimBin(t), "trace", prov)
	asJSON := run(t, 30*time.Second, []string{"PATH=/usr/bin:/bin"}, shimBin(t), "trace", "--json", prov)
	wantTerminalSafe(t, "trace", text.stdout+text.stderr, `NVIDIA H100\x1b]0;PWNED\x07\x1b[2J\u202e`)
	wantTerminalSafe(t, "trace --json", asJSON.stdout+asJSON.stderr)
	if !strings.Contains(asJSON.stdout, `NVIDIA H100\u001b]0;PWNED\u0007\u001b[2J`) {
		t.Errorf("trace --json does not hold the GPU name escaped:\n%s", asJSON.stdout)
	}
}

// diff's text names both changes between the records, escaped.
func TestDiffTextShowsTheProbesEscaped(t *testing.T) {
	prov, _, _ := probedRecords(t)
	d := run(t, 30*time.Second, []string{"PATH=/usr/bin:/bin"}, shimBin(t), "diff", prov)
	if d.code != 1 || !strings.Contains(d.stdout, "old: ") {
		t.Fatalf("diff exit %d, want 1 (changes that matter):\n%s\n%s", d.code, d.stdout, d.stderr)
	}
	wantTerminalSafe(t, "diff", d.stdout+d.stderr, `NVIDIA H100\x1b]0;PWNED\x07\x1b[2J\u202e`, `2.9.0+cu130\x1b]0;PWNED\x07\x1b[2J`)
}

// advise, for the node and for the image at --root, shows torch's version
// as its escape on every line that names it.
func TestAdviseShowsTheProbesEscaped(t *testing.T) {
	env := shimEnv(t, fakeLibrary(t), ptr(hostileNode()))
	root := envValue(env, "PREFLIGHT_ROOT")
	torchProbe(t, root)
	node := run(t, 30*time.Second, env, shimBin(t), "advise")
	if node.code != 0 || !strings.Contains(node.stdout, "driver 580.65.06") {
		t.Fatalf("advise exit %d, want the node's advice:\n%s\n%s", node.code, node.stdout, node.stderr)
	}
	wantTerminalSafe(t, "advise", node.stdout+node.stderr)
	image := run(t, 30*time.Second, env, shimBin(t), "advise", "--root", root)
	if image.code != 0 || !strings.Contains(image.stdout, "Minimum driver per branch") {
		t.Fatalf("advise --root exit %d, want the image's advice:\n%s\n%s", image.code, image.stdout, image.stderr)
	}
	wantTerminalSafe(t, "advise --root", image.stdout+image.stderr, `torch 2.9.0+cu130\x1b]0;PWNED\x07\x1b[2J (CUDA 13.0)`)
}

// Every --json output escapes what a terminal acts on and keeps the exact
// bytes: decoded, it holds the probes as the driver and the image gave them.
func TestJSONOutputsKeepTheProbesEscaped(t *testing.T) {
	prov, env, checkOut := probedRecords(t)
	root := envValue(env, "PREFLIGHT_ROOT")
	outputs := map[string]string{"check --json": checkOut}
	for name, args := range map[string][]string{
		"diff --json":          {"diff", "--json", prov},
		"advise --json":        {"advise", "--json"},
		"advise --root --json": {"advise", "--root", root, "--json"},
	} {
		r := run(t, 30*time.Second, env, shimBin(t), args...)
		if r.code > 1 {
			t.Fatalf("%s exit %d:\n%s", name, r.code, r.stderr)
		}
		outputs[name] = r.stdout
	}
	for name, out := range outputs {
		wantTerminalSafe(t, name, out)
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%s is not JSON: %v\n%s", name, err, out)
		}
		if name != "advise --json" && !strings.Contains(fmt.Sprint(v), torchVersionProbe) { // the node's advice names no framework
			t.Errorf("%s does not hold torch's version exactly:\n%s", name, out)
		}
	}
	for _, name := range []string{"check --json", "diff --json"} {
		if !strings.Contains(outputs[name], `NVIDIA H100\u001b]0;PWNED\u0007\u001b[2J\u202e`) {
			t.Errorf("%s does not hold the GPU name escaped:\n%s", name, outputs[name])
		}
	}
}

// probedRun runs `-- true` on hostileNode with torchProbe in the image and
// require, which the driver cannot meet, under the strict policy: the run
// aborts with the GPU name in its finding.
func probedRun(t *testing.T, require string, extra ...string) (result, []string) {
	t.Helper()
	env := shimEnv(t, fakeLibrary(t), ptr(hostileNode()), append([]string{"NVIDIA_REQUIRE_CUDA=" + require, "PREFLIGHT_POLICY=strict"}, extra...)...)
	torchProbe(t, envValue(env, "PREFLIGHT_ROOT"))
	r := run(t, 30*time.Second, env, shimBin(t), "--", "true")
	if r.code != 78 {
		t.Fatalf("exit %d, want 78 (%q blocks):\n%s", r.code, require, r.stderr)
	}
	return r, env
}

// The termination message, which kubectl prints to an operator's terminal,
// shows the GPU name escaped, and stays within Kubernetes' 4096 bytes when
// the escapes make a long finding longer.
func TestTerminationMessageShowsTheProbesEscaped(t *testing.T) {
	_, env := probedRun(t, "cuda>=99.0")
	msg, err := os.ReadFile(envValue(env, "PREFLIGHT_TERMINATION_LOG"))
	if err != nil {
		t.Fatal(err)
	}
	wantTerminalSafe(t, "termination message", string(msg), `(NVIDIA H100\x1b]0;PWNED\x07\x1b[2J\u202e, brand Nvidia`)

	_, env = probedRun(t, "cuda>=99.0 brand=tesla"+strings.Repeat("\u202e\x1b", 1000))
	msg, err = os.ReadFile(envValue(env, "PREFLIGHT_TERMINATION_LOG"))
	if err != nil {
		t.Fatal(err)
	}
	if len(msg) > 4096 {
		t.Errorf("termination message is %d bytes, over Kubernetes' 4096", len(msg))
	}
	wantTerminalSafe(t, "termination message of a long requirement", string(msg), `\u202e\x1b\u202e\x1b`)
	// The budget cuts between two escapes, whichever byte it falls on.
	for pad := range 10 {
		_, env = probedRun(t, "cuda>=99.0 brand=tesla"+strings.Repeat("x", pad)+strings.Repeat("\U000e0041\u202e\x1b", 400))
		msg, err = os.ReadFile(envValue(env, "PREFLIGHT_TERMINATION_LOG"))
		if err != nil {
			t.Fatal(err)
		}
		if half := halfEscape.FindString(string(msg)); half != "" || len(msg) > 4096 {
			t.Errorf("termination message of %d bytes cuts an escape in two (%q):\n%s", len(msg), half, msg)
		}
	}
}

// halfEscape matches an escape whose hex digits stop short.
var halfEscape = regexp.MustCompile(`\\(x[0-9a-f]?|u[0-9a-f]{0,3}|U[0-9a-f]{0,7})([^0-9a-f]|$)`)

// The JSON log escapes what a terminal acts on and keeps the exact bytes;
// the escapes do not push the provenance line past journald's threshold.
func TestJSONLogKeepsTheProbesEscaped(t *testing.T) {
	r, _ := probedRun(t, "cuda>=99.0")
	wantTerminalSafe(t, "JSON log", r.stderr, `NVIDIA H100\u001b]0;PWNED\u0007\u001b[2J\u202e`)
	var held bool
	for _, line := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
		var m struct {
			RecordBytes int             `json:"recordBytes"`
			Record      json.RawMessage `json:"record"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON line (%v): %s", err, line)
		}
		if m.Record != nil && (len(line) > provline.MaxLineBytes || m.RecordBytes == 0) {
			t.Errorf("the provenance line is %d bytes (at most %d), recordBytes %d", len(line), provline.MaxLineBytes, m.RecordBytes)
		}
		var v any
		json.Unmarshal([]byte(line), &v)
		held = held || strings.Contains(fmt.Sprint(v), gpuNameProbe)
	}
	if !held {
		t.Errorf("no line holds the GPU name exactly:\n%s", r.stderr)
	}
}

// The console log escapes every value, the record nested in the provenance
// line too.
func TestConsoleLogShowsTheProbesEscaped(t *testing.T) {
	r, _ := probedRun(t, "cuda>=99.0", "PREFLIGHT_LOG_FORMAT=console")
	wantTerminalSafe(t, "console log", r.stderr, `8x NVIDIA H100\x1b]0;PWNED\x07\x1b[2J\u202e`, `torch 2.9.0+cu130\x1b]0;PWNED\x07\x1b[2J`)
	if _, prov := stderrLines(t, r.stderr); prov != 1 {
		t.Errorf("%d provenance lines, want 1:\n%s", prov, r.stderr)
	}
}

// check's human report shows both probes escaped.
func TestHumanReportShowsTheProbesEscaped(t *testing.T) {
	env := shimEnv(t, fakeLibrary(t), ptr(hostileNode()), "PREFLIGHT_POLICY=warn")
	torchProbe(t, envValue(env, "PREFLIGHT_ROOT"))
	r := run(t, 30*time.Second, env, shimBin(t), "check")
	if r.code != 0 || !strings.Contains(r.stdout, "GPUs (8)") {
		t.Fatalf("check exit %d, want the report of 8 GPUs:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	wantTerminalSafe(t, "check", r.stdout+r.stderr, `NVIDIA H100\x1b]0;PWNED\x07\x1b[2J\u202e`, `torch  2.9.0+cu130\x1b]0;PWNED\x07\x1b[2J`)
}

// everyEncoding is a value holding each way text can carry what a terminal
// acts on or hides: a 7-bit OSC and CSI, CSI as a C1 character and as a raw
// 8-bit byte, a byte that is not UTF-8, DEL, the line and paragraph
// separators, the bidi isolates and marks, a byte-order mark, a tag
// character, the Hangul fillers and 40 combining marks on one letter.
var everyEncoding = "\x1b]0;PWNED\x07\x1b[2J\u009b31m\x9b31m\xff\x7f\u2028\u2029\u2066\u2069\u061c\u200e\u200f\ufeff" +
	"\U000e0041\u115f\u3164Z" + combiningFlood

var combiningFlood = strings.Repeat("\u0301", 40)

// Each usage error and message that quotes what it was given (a flag, a
// setting's value, a path, a command name) shows everyEncoding escaped.
func TestUsageErrorsShowWhatTheyQuoteEscaped(t *testing.T) {
	env := shimEnv(t, fakeLibrary(t), nil)
	root := envValue(env, "PREFLIGHT_ROOT")
	for name, args := range map[string][]string{
		"unknown flag":            {"--x" + everyEncoding},
		"unknown flag of check":   {"check", "--x" + everyEncoding},
		"invalid --policy":        {"--policy=" + everyEncoding, "--", "true"},
		"help of no command":      {"help", everyEncoding},
		"diff of missing records": {"diff", "/nonexistent/" + everyEncoding, "/nonexistent/b.json"},
		"diff of a missing dir":   {"diff", "/nonexistent/" + everyEncoding},
		"trace of a missing dir":  {"trace", "/nonexistent/" + everyEncoding},
		"trace --since":           {"trace", "--since", everyEncoding, root},
		"advise --driver":         {"advise", "--driver", "580" + everyEncoding},
		"advise --gpu":            {"advise", "--driver", "580.65.06", "--gpu", "9.0" + everyEncoding},
		"advise --root":           {"advise", "--root", "/nonexistent/" + everyEncoding},
		"affinity --root":         {"affinity", "--root", "/nonexistent/" + everyEncoding},
		"bake --out":              {"bake", "--out", filepath.Join(t.TempDir(), everyEncoding)},
	} {
		r := run(t, 30*time.Second, env, shimBin(t), args...)
		wantTerminalSafe(t, name, r.stdout+r.stderr, `\x1b]0;PWNED`)
	}
	r := run(t, 30*time.Second, append(env, "PREFLIGHT_POLICY="+everyEncoding), shimBin(t), "--", "true")
	if r.code != 64 {
		t.Errorf("PREFLIGHT_POLICY holding escapes: exit %d, want 64", r.code)
	}
	wantTerminalSafe(t, "invalid PREFLIGHT_POLICY", r.stdout+r.stderr, `\x1b]0;PWNED`)
}

// shortProbe fits NVML's 96-byte name buffer: an 8-bit CSI (which the
// probe reads as U+FFFD, not being UTF-8), the Hangul fillers and a bidi
// isolate.
const shortProbe = "\x9b31m\u3164\u115f\u2066"

// hostileImage is hostileNode whose GPUs' names end in shortProbe, a host
// whose hostname and driver version file hold everyEncoding, and an image
// at root whose CUDA version files, torch and a distribution's folder, Name
// and Version hold it.
func hostileImage(t *testing.T, extra ...string) []string {
	t.Helper()
	s := fakenvml.H100x8("580.65.06", 13000)
	for _, g := range s.GPUs {
		g["name"] = "NVIDIA H100" + shortProbe
	}
	env := shimEnv(t, fakeLibrary(t), &s, extra...)
	root := envValue(env, "PREFLIGHT_ROOT")
	torchProbe(t, root)
	for p, content := range map[string]string{
		"proc/sys/kernel/hostname":                                           "node-7" + everyEncoding + "\n",
		"proc/driver/nvidia/version":                                         "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06" + everyEncoding + "  Sun Jul 27 07:09:27 UTC 2025\n",
		"usr/local/cuda/version.json":                                        `{"cuda":{"name":"CUDA SDK` + everyEncoding + `","version":"13.0.0` + everyEncoding + `"}}`,
		"usr/local/cuda/version.txt":                                         "CUDA Version 13.0.0" + everyEncoding + "\n",
		filepath.Join(e2eSP, "evil"+everyEncoding+"-1.0.dist-info/METADATA"): "Metadata-Version: 2.1\nName: evil" + everyEncoding + "\nVersion: 1.0" + everyEncoding + "\n",
		filepath.Join(e2eSP, "torch-2.9.0.dist-info/METADATA"):               "Metadata-Version: 2.1\nName: torch" + everyEncoding + "\nVersion: 2.9.0" + everyEncoding + "\n",
	} {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return env
}

// Text from the host (hostname, driver version file, GPU names), the image
// (dist-info folders and their METADATA), the environment (a variable's
// name as well as its value) and the command line reaches every output a
// terminal shows escaped: check's report and --json, explain, advise
// --root, affinity, the console and JSON logs and the termination message.
func TestHostImageAndEnvironmentTextShowEscaped(t *testing.T) {
	prov := t.TempDir()
	env := hostileImage(t, "PREFLIGHT_PROVENANCE_DIR="+prov, "NVIDIA_X"+everyEncoding+"=1",
		"NCCL_DEBUG=INFO"+everyEncoding, "NVIDIA_REQUIRE_CUDA=cuda>=99.0", "NVIDIA_REQUIRE_X="+everyEncoding)
	root := envValue(env, "PREFLIGHT_ROOT")
	outputs := map[string]string{}
	for name, args := range map[string][]string{
		"check":                {"check"},
		"check --json":         {"check", "--json"},
		"explain":              {"explain"},
		"advise --root":        {"advise", "--root", root},
		"advise --root --json": {"advise", "--root", root, "--json"},
		"affinity --root":      {"affinity", "--root", root},
	} {
		r := run(t, 30*time.Second, env, shimBin(t), args...)
		outputs[name] = r.stdout + r.stderr
	}
	for _, format := range []string{"json", "console"} {
		r := run(t, 30*time.Second, append(env, "PREFLIGHT_LOG_FORMAT="+format, "PREFLIGHT_POLICY=strict"),
			shimBin(t), "--", "sh", "-c", "exit 0", "arg"+everyEncoding)
		if r.code != 78 {
			t.Fatalf("exit %d, want 78 (the requirement blocks):\n%s", r.code, r.stderr)
		}
		outputs[format+" log"] = r.stdout + r.stderr
		msg, err := os.ReadFile(envValue(env, "PREFLIGHT_TERMINATION_LOG"))
		if err != nil {
			t.Fatal(err)
		}
		outputs["termination message ("+format+")"] = string(msg)
	}
	records, _ := filepath.Glob(filepath.Join(prov, "*.json"))
	for _, p := range records {
		b, _ := os.ReadFile(p)
		outputs["record "+filepath.Base(p)] = string(b)
	}
	if len(records) == 0 {
		t.Fatal("no record written")
	}
	for name, out := range outputs {
		wantTerminalSafe(t, name, out)
	}
	for name, want := range map[string]string{
		"check":                         `node-7\x1b]0;PWNED\x07`,
		"check --json":                  `"hostname": "node-7\u001b]0;PWNED\u0007`,
		"console log":                   "NVIDIA H100\ufffd31m\\u3164\\u115f\\u2066",
		"json log":                      `"NCCL_DEBUG":"INFO\u001b]0;PWNED\u0007`,
		"termination message (console)": `invalid expression "\x1b]0;PWNED\a\x1b[2J\u009b31m\x9b31m\xff\x7f\u2028\u2029\u2066`,
	} {
		if !strings.Contains(outputs[name], want) {
			t.Errorf("%s does not show %s:\n%s", name, want, outputs[name])
		}
	}
}

// trace and diff show two ranks' records, one of them from hostileImage,
// with every encoding escaped: the Hangul fillers in a GPU name too.
func TestTraceAndDiffShowEveryEncodingEscaped(t *testing.T) {
	prov := t.TempDir()
	for rank := range 2 {
		extra := []string{"PREFLIGHT_PROVENANCE_DIR=" + prov, "PREFLIGHT_POLICY=warn", "SLURM_JOB_ID=4242", "SLURM_NTASKS=2",
			fmt.Sprintf("SLURM_PROCID=%d", rank), fmt.Sprintf("SLURMD_NODENAME=node-%d", rank)}
		env := shimEnv(t, fakeLibrary(t), ptr(fakenvml.H100x8("580.65.06", 13000)), extra...)
		if rank == 1 {
			env = hostileImage(t, extra...)
		}
		if r := run(t, 30*time.Second, env, shimBin(t), "--", "true"); r.code != 0 {
			t.Fatalf("exit %d:\n%s", r.code, r.stderr)
		}
	}
	text := run(t, 30*time.Second, []string{"PATH=/usr/bin:/bin"}, shimBin(t), "trace", prov)
	wantTerminalSafe(t, "trace", text.stdout+text.stderr, `\u3164\u115f\u2066`)
	asJSON := run(t, 30*time.Second, []string{"PATH=/usr/bin:/bin"}, shimBin(t), "trace", "--json", prov)
	wantTerminalSafe(t, "trace --json", asJSON.stdout+asJSON.stderr, `\u3164\u115f`)
	d := run(t, 30*time.Second, []string{"PATH=/usr/bin:/bin"}, shimBin(t), "diff", prov)
	wantTerminalSafe(t, "diff", d.stdout+d.stderr, `\u3164\u115f\u2066`)
}
