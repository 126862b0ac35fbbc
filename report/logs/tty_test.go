package logs

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/report/termsafe"
	"github.com/gpu-preflight/gpu-preflight/test/ptytest"
	"github.com/gpu-preflight/gpu-preflight/test/reporttest"
)

func TestTerminalOutputIsColouredAndConsole(t *testing.T) {
	// A terminal that takes colour, whatever the one running the tests
	// says (TERM=dumb and NO_COLOR: cmd/gpu-preflight's tty_test.go).
	t.Setenv("TERM", "xterm")
	t.Setenv("NO_COLOR", "")
	master, slave := ptytest.Open(t)
	if !termsafe.IsTerminal(slave) || termsafe.IsTerminal(&bytes.Buffer{}) {
		t.Fatal("IsTerminal does not tell a pty from a buffer")
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if termsafe.IsTerminal(f) {
		t.Error("a regular file is not a terminal")
	}

	done := make(chan string)
	go func() {
		var out bytes.Buffer
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			out.Write(buf[:n])
			if err != nil || strings.Contains(out.String(), "Verdict:") {
				break
			}
		}
		done <- out.String()
	}()
	l, err := New(slave, FormatAuto, "info")
	if err != nil {
		t.Fatal(err)
	}
	l.Warn().Str("check", "shm").Msg("small shm")
	if err := report.Human(slave, report.New(reporttest.Inputs())); err != nil {
		t.Fatal(err)
	}
	out := <-done
	if strings.Contains(out, `{"time"`) {
		t.Errorf("auto format on a terminal wrote JSON: %q", out)
	}
	if !strings.Contains(out, "small shm") {
		t.Errorf("log line missing: %q", out)
	}
	if !strings.Contains(out, "\x1b[31m"+"error"+"\x1b[0m") {
		t.Errorf("human report on a terminal is not coloured: %q", out)
	}
}
