package ledger

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/decision"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/test/schematest"
)

const envChild = "GPU_PREFLIGHT_TEST_LEDGER" // "path,worker,runs"

func TestMain(m *testing.M) {
	if spec := os.Getenv(envChild); spec != "" {
		appendChild(spec)
		return
	}
	if spec := os.Getenv(envShortWrite); spec != "" {
		shortWriteChild(spec)
		return
	}
	if dir := os.Getenv(envFullDisk); dir != "" {
		fullDiskChild(dir)
		return
	}
	os.Exit(m.Run())
}

// bigRecord is a record whose line is well over PIPE_BUF (4096 bytes), so
// the test does not pass merely because small writes are atomic anyway.
func bigRecord(worker, run int) report.Record {
	var fw []facts.Framework
	for i := 0; i < 40; i++ {
		fw = append(fw, facts.Framework{Name: "torch", Version: "2.3.0+cu121", CUDAVersion: "12.1",
			Archs: []string{"sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "compute_90"}})
	}
	return report.New(report.Inputs{
		Facts:    facts.Facts{Container: facts.Container{Frameworks: fw}},
		Decision: decision.Decision{Policy: "fail", Action: decision.Exec},
		Argv:     []string{"worker", strconv.Itoa(worker), "run", strconv.Itoa(run)},
		Now:      time.Now(),
	})
}

func appendChild(spec string) {
	parts := strings.Split(spec, ",")
	path := parts[0]
	worker, _ := strconv.Atoi(parts[1])
	runs, _ := strconv.Atoi(parts[2])
	for i := 0; i < runs; i++ {
		if err := Append(path, bigRecord(worker, i)); err != nil {
			fmt.Fprintln(os.Stderr, "ledger child:", err)
			os.Exit(2)
		}
	}
}

// Issue 6: 16 concurrent writers x 200 runs each leave exactly 3200 valid
// ledger lines: none torn, none lost, none interleaved.
func TestConcurrentWritersLoseNoLine(t *testing.T) {
	const writers, runs = 16, 200
	path := filepath.Join(t.TempDir(), "runs.jsonl")
	start := time.Now()
	var cmds []*exec.Cmd
	var stderrs []*bytes.Buffer
	for w := 0; w < writers; w++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%d,%d", envChild, path, w, runs))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		stderrs = append(stderrs, &stderr)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer %d: %v\n%s", i, err, stderrs[i])
		}
	}
	elapsed := time.Since(start)

	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), MaxLineBytes)
	lines, minLen := 0, 1<<30
	seenRun := make(map[string]bool)
	seenWorkerRun := make(map[string]bool)
	for sc.Scan() {
		line := sc.Bytes()
		lines++
		minLen = min(minLen, len(line))
		var r report.Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("line %d is not a record (torn or interleaved): %v\n%.200s", lines, err, line)
		}
		if lines%100 == 1 { // the schema check is slow; JSON parsing already catches torn lines
			if err := schematest.Check(line); err != nil {
				t.Fatalf("line %d: %v", lines, err)
			}
		}
		if seenRun[r.RunID] {
			t.Fatalf("line %d repeats run %s", lines, r.RunID)
		}
		seenRun[r.RunID] = true
		seenWorkerRun[strings.Join(r.Command.Argv, " ")] = true
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if lines != writers*runs || len(seenWorkerRun) != writers*runs {
		t.Fatalf("%d lines (%d distinct worker/run pairs), want exactly %d", lines, len(seenWorkerRun), writers*runs)
	}
	if minLen <= 4096 {
		t.Fatalf("lines are only %d bytes; the test must write more than PIPE_BUF to mean anything", minLen)
	}
	t.Logf("%d writers x %d runs: %d valid lines of >= %d bytes in %v", writers, runs, lines, minLen, elapsed)
}

func TestAppendRefusesSymlinksAndNonFiles(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep\n"), 0o600)
	link := filepath.Join(dir, "link.jsonl")
	os.Symlink(target, link)
	r := bigRecord(0, 0)
	tests := []struct {
		name, path, wantErr string
	}{
		{"symlink", link, "too many levels of symbolic links"},
		{"directory", dir, "is a directory"},
		{"missing directory", filepath.Join(dir, "nope", "runs.jsonl"), "no such file or directory"},
	}
	for _, tt := range tests {
		err := Append(tt.path, r)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "append to ledger") {
			t.Errorf("%s: error = %v, want one containing %q", tt.name, err, tt.wantErr)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "keep\n" {
		t.Error("symlink target was appended to")
	}
}

func TestAppendCreatesFileWithMode0640(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.jsonl")
	if err := Append(path, bigRecord(0, 0)); err != nil {
		t.Fatal(err)
	}
	if err := Append(path, bigRecord(0, 1)); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want 0640", st.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	if n := bytes.Count(b, []byte("\n")); n != 2 {
		t.Errorf("%d lines, want 2", n)
	}
}

// BenchmarkAppend is the cost of one ledger line (~8 KiB, one write and an
// fdatasync).
func BenchmarkAppend(b *testing.B) {
	path := filepath.Join(b.TempDir(), "runs.jsonl")
	r := bigRecord(0, 0)
	for i := 0; i < b.N; i++ {
		if err := Append(path, r); err != nil {
			b.Fatal(err)
		}
	}
}

func TestAppendToAFIFOWithoutReaderFailsAtOnce(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "ledger")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Append(fifo, bigRecord(0, 0)) }()
	select {
	case err := <-done:
		// Opened read-write, a FIFO opens at once (fifo(7)) and is
		// refused as no regular file; write-only it would fail with ENXIO.
		if err == nil || !strings.Contains(err.Error(), "not a regular file (a FIFO)") {
			t.Errorf("Append to a FIFO nobody reads = %v, want a refusal that names the FIFO", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Append blocked on a FIFO nobody reads")
	}
}

const envShortWrite = "GPU_PREFLIGHT_TEST_LEDGER_SHORT" // "path,limit"

// shortWriteChild appends one record with RLIMIT_FSIZE set just past the
// ledger's current size, as a disk that fills up in the middle of the line
// does: write(2) writes what fits and returns the short count.
func shortWriteChild(spec string) {
	path, limit, _ := strings.Cut(spec, ",")
	n, _ := strconv.ParseUint(limit, 10, 64)
	signal.Ignore(syscall.SIGXFSZ) // else the kernel kills us instead of writing short
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
		fmt.Fprintln(os.Stderr, "setrlimit:", err)
		os.Exit(2)
	}
	err := Append(path, bigRecord(99, 0))
	if err == nil || !strings.Contains(err.Error(), "short write") || !strings.Contains(err.Error(), "cut back") {
		fmt.Fprintln(os.Stderr, "want a short write, got:", err)
		os.Exit(3)
	}
}

// TestShortWriteLeavesNoPartialLine: a line cut short (here by
// RLIMIT_FSIZE, as a disk filling up in the middle of the line does) is cut
// back, so the ledger holds the line before and the next run's line, both
// whole, and nothing torn between them.
func TestShortWriteLeavesNoPartialLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.jsonl")
	if err := Append(path, bigRecord(1, 0)); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envShortWrite+"="+path+","+strconv.FormatInt(st.Size()+1000, 10))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the short-write child: %v\n%s", err, out)
	}
	if after, _ := os.Stat(path); after.Size() != st.Size() {
		t.Errorf("after the short write the ledger is %d bytes, want %d: the partial line was not cut back", after.Size(), st.Size())
	}
	if err := Append(path, bigRecord(2, 0)); err != nil {
		t.Fatal(err)
	}
	checkWholeLines(t, path, 2)
}

// TestATornLineIsEndedByTheNextAppend: a line torn and never cut back (a
// crash between the short write and the cut) costs only itself: the next
// line starts after a newline of its own.
func TestATornLineIsEndedByTheNextAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.jsonl")
	if err := Append(path, bigRecord(1, 0)); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"schemaVersion":"1","runId":"torn`)
	f.Close()
	if err := Append(path, bigRecord(2, 0)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("the ledger has %d lines, want 3: whole, torn, whole", len(lines))
	}
	for i, want := range []bool{true, false, true} {
		if ok := json.Valid([]byte(lines[i])); ok != want {
			t.Errorf("line %d: valid JSON %v, want %v (%d bytes)", i+1, ok, want, len(lines[i]))
		}
	}
	schematest.Validate(t, []byte(lines[2]))
	if !strings.Contains(lines[2], `"argv":["worker","2","run","0"]`) {
		t.Errorf("the last line is not the run appended after the torn one")
	}
}

// checkWholeLines fails unless the ledger at path is n valid records, one
// a line, every line ended.
func checkWholeLines(t *testing.T, path string, n int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Errorf("the ledger ends in a partial line")
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("the ledger has %d lines, want %d whole ones", len(lines), n)
	}
	for i, l := range lines {
		schematest.Validate(t, []byte(l))
		if i == n-1 && !strings.Contains(l, `"argv":["worker","2","run","0"]`) {
			t.Errorf("the last line is not the run appended last")
		}
	}
}
