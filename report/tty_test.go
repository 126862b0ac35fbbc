package report

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY returns both ends of a new pseudo-terminal.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx (needed to test terminal output): %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pty slave: %v", err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

func TestTerminalOutputIsColouredAndConsole(t *testing.T) {
	master, slave := openPTY(t)
	if !IsTerminal(slave) || IsTerminal(&bytes.Buffer{}) {
		t.Fatal("IsTerminal does not tell a pty from a buffer")
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Error("a regular file is not a terminal")
	}

	done := make(chan string)
	go func() {
		var out bytes.Buffer
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			out.Write(buf[:n])
			if err != nil || strings.Contains(out.String(), "Decision:") {
				break
			}
		}
		done <- out.String()
	}()
	l, err := NewLogger(slave, FormatAuto, "info")
	if err != nil {
		t.Fatal(err)
	}
	l.Warn().Str("check", "shm").Msg("small shm")
	if err := Human(slave, New(sampleInputs())); err != nil {
		t.Fatal(err)
	}
	out := <-done
	if strings.Contains(out, `{"time"`) {
		t.Errorf("auto format on a terminal wrote JSON: %q", out)
	}
	if !strings.Contains(out, "small shm") {
		t.Errorf("log line missing: %q", out)
	}
	if !strings.Contains(out, red+"error"+reset) {
		t.Errorf("human report on a terminal is not coloured: %q", out)
	}
}
