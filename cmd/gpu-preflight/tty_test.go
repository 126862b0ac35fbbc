package main

import (
	"bytes"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/test/ptytest"
)

// runOnTerminal runs the shim's check, then the ENTRYPOINT form (whose
// log check does not repeat), with stdout and stderr on a pseudo-terminal,
// and returns what the terminal showed.
func runOnTerminal(t *testing.T, env ...string) string {
	t.Helper()
	return onTerminal(t, env, "check") + onTerminal(t, env, "--", "true")
}

func onTerminal(t *testing.T, env []string, args ...string) string {
	t.Helper()
	master, slave := ptytest.Open(t)
	cmd := exec.Command(shimPath, args...)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "PREFLIGHT_PROVENANCE_DIR=off", "PREFLIGHT_LOG_PROVENANCE=false",
		"PREFLIGHT_HOST_ROOT=" + driverRoot(t, "550.54.15"), "NVIDIA_REQUIRE_CUDA=cuda>=12.8",
		"PREFLIGHT_TERMINATION_LOG=" + filepath.Join(t.TempDir(), "termination-log")}, env...)
	cmd.Stdout, cmd.Stderr = slave, slave
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	read := make(chan struct{})
	go func() {
		io.Copy(&out, master) // ends with EIO once the slave is closed
		close(read)
	}()
	cmd.Wait()
	slave.Close()
	select {
	case <-read:
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal did not drain")
	}
	return out.String()
}

// On a terminal the log is console text and statuses are coloured; with
// NO_COLOR set, or TERM=dumb, nothing is.
func TestColourOnlyOnATerminalAndNotWithNoColor(t *testing.T) {
	tty := runOnTerminal(t, "TERM=xterm")
	for _, want := range []string{"\x1b[31mERR\x1b[0m", "\x1b[31merror\x1b[0m", "Verdict: would abort with exit 78"} {
		if !strings.Contains(tty, want) {
			t.Errorf("the terminal does not show %q:\n%q", want, tty)
		}
	}
	if strings.Contains(tty, `{"time"`) {
		t.Errorf("JSON log on a terminal:\n%s", tty)
	}
	for _, env := range [][]string{{"TERM=xterm", "NO_COLOR=1"}, {"TERM=dumb"}} {
		out := runOnTerminal(t, env...)
		if strings.Contains(out, "\x1b[") {
			t.Errorf("%v: escape codes on the terminal:\n%q", env, out)
		}
		if !strings.Contains(out, " ERR ") || !strings.Contains(out, "Verdict: would abort") {
			t.Errorf("%v: not the console log and report:\n%s", env, out)
		}
	}
	// NO_COLOR set but empty does not count (no-color.org).
	if out := runOnTerminal(t, "TERM=xterm", "NO_COLOR="); !strings.Contains(out, "\x1b[31m") {
		t.Errorf("an empty NO_COLOR turned colour off:\n%q", out)
	}
}
