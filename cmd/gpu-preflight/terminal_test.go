package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Values planted in facts to act on a terminal: clear the screen, retitle
// it, colour the text, and end a line to forge the next.
const (
	clearScreen = "\x1b[2J\x1b[H"
	retitle     = "\x1b]0;pwned\x07"
	forgedLine  = "\n{\"level\":\"error\",\"message\":\"forged\"}\r"
)

// controls returns the control bytes in out other than the newline, and
// whether a line starts with the forged text.
func controls(out string) (found []byte, forged bool) {
	for i := 0; i < len(out); i++ {
		if c := out[i]; (c < 0x20 && c != '\n') || c == 0x7f {
			found = append(found, c)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), `{"level":"error","message":"forged"`) {
			forged = true
		}
	}
	return found, forged
}

// TestHumanOutputsEscapeTerminalControls plants escape sequences and
// control characters in torch/version.py, PREFLIGHT_IMAGE,
// NVIDIA_REQUIRE_CUDA and CUDA_VISIBLE_DEVICES, and reads every human
// output: the check report, the console log, explain and diff. None may
// hold a raw control character or a forged line (issue 13, item 8).
func TestHumanOutputsEscapeTerminalControls(t *testing.T) {
	root := driverRoot(t, "550.54.15")
	sp := filepath.Join(root, sitePackages)
	mkdirs(t, filepath.Join(sp, "torch"), filepath.Join(sp, "torch-2.3.0+cu121.dist-info"))
	version := "__version__ = '2.3.0+cu121" + clearScreen + "'\ncuda = '12.1" + retitle + "'\n"
	if err := os.WriteFile(filepath.Join(sp, "torch/version.py"), []byte(version), 0o644); err != nil {
		t.Fatal(err)
	}
	prov := t.TempDir()
	env := []string{"PATH=/usr/bin:/bin", "PREFLIGHT_ROOT=" + root, "PREFLIGHT_PROVENANCE_DIR=" + prov,
		"PREFLIGHT_TERMINATION_LOG=", "PREFLIGHT_POLICY=warn",
		"PREFLIGHT_IMAGE=registry.example/train:1" + retitle + clearScreen,
		"NVIDIA_REQUIRE_CUDA=cuda>=12.1" + forgedLine + " brand=tesla\x1b[31m,driver>=470",
		"CUDA_VISIBLE_DEVICES=0" + forgedLine}
	outputs := map[string]string{}
	run := func(name string, extra []string, args ...string) {
		cmd := exec.Command(shimPath, args...)
		cmd.Env = append(append([]string{}, env...), extra...)
		out, _ := cmd.CombinedOutput()
		outputs[name] = string(out)
	}
	run("check (human report, console log)", []string{"PREFLIGHT_LOG_FORMAT=console"}, "check")
	run("exec (console log)", []string{"PREFLIGHT_LOG_FORMAT=console", "PREFLIGHT_LOG_LEVEL=debug"}, "--", "true")
	run("explain", nil, "explain")
	run("explain argument", nil, "explain", "cuda>=12"+clearScreen)
	run("diff", nil, "diff", prov)
	if !strings.Contains(outputs["check (human report, console log)"], "2.3.0+cu121") ||
		!strings.Contains(outputs["diff"], "old:") {
		t.Fatalf("the runs did not produce what this test reads:\n%s\n%s", outputs["check (human report, console log)"], outputs["diff"])
	}
	if !strings.Contains(outputs["check (human report, console log)"], `\x1b[2J`) {
		t.Errorf("the report does not show the escaped sequence:\n%s", outputs["check (human report, console log)"])
	}
	for name, out := range outputs {
		if found, forged := controls(out); len(found) > 0 || forged {
			t.Errorf("%s: control bytes %q, forged line %v:\n%s", name, found, forged, out)
		}
	}
}
