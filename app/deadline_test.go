package app

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/gather"
)

// lockedBuffer is a report two goroutines may write.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// deadlineRun is a check run over an empty root whose gathering is
// gatherFacts, whose human report goes to report and whose exits are
// recorded instead of taken.
type deadlineRun struct {
	*run
	report *lockedBuffer
	exited chan int
}

func newDeadlineRun(t *testing.T, timeout time.Duration, gatherFacts func(context.Context, gather.Options) (gather.Result, []string)) *deadlineRun {
	t.Helper()
	root := t.TempDir()
	env := envvars.Parse([]string{"PREFLIGHT_PROVENANCE_DIR=off", "PREFLIGHT_ROOT=" + root, "PREFLIGHT_HOST_ROOT=" + root,
		"PREFLIGHT_LOG_LEVEL=disabled", "PREFLIGHT_TERMINATION_LOG="})
	cfg, err := Load(env, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := newRun(cfg, env, nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	r.cancel()
	r.cfg.Timeout = duration(timeout)
	r.ctx, r.cancel = context.WithTimeout(context.Background(), timeout)
	t.Cleanup(r.cancel)
	d := &deadlineRun{run: r, report: &lockedBuffer{}, exited: make(chan int, 2)}
	r.stdout, r.gatherFacts = d.report, gatherFacts
	r.exit = func(code int) { d.exited <- code }
	return d
}

// gathered is a gathering that finds nothing and says "gathered".
func gathered(context.Context, gather.Options) (gather.Result, []string) {
	return gather.Result{}, []string{"gathered"}
}

// finishedWith reports how many times the run was finished with a result
// that says what.
func (d *deadlineRun) finishedWith(what string) int {
	return strings.Count(d.report.String(), "  "+what+"\n")
}

func TestAGatheringInTimeIsFinishedOnItsGoroutine(t *testing.T) {
	d := newDeadlineRun(t, time.Hour, gathered)
	code := d.execute()
	if code != ExitOK || d.finishedWith("gathered") != 1 || len(d.exited) != 0 {
		t.Fatalf("code %d, exits %d, report:\n%s\nwant gathered's result finished once, and no exit", code, len(d.exited), d.report)
	}
}

// A gathering that never returns (a system call on a hung file system)
// does not hold the run: at the deadline another goroutine finishes it
// with what was gathered before, the timeout's node fault, and exits with
// the code.
func TestAHungGatheringIsFinishedAtTheDeadline(t *testing.T) {
	hang := make(chan struct{})
	defer close(hang) // the hung goroutine then parks for good, as in the process
	d := newDeadlineRun(t, 20*time.Millisecond, func(context.Context, gather.Options) (gather.Result, []string) {
		<-hang
		return gather.Result{}, []string{"late"}
	})
	go d.execute()
	select {
	case code := <-d.exited:
		if code != int(d.cfg.NodeFaultExitCode) || !strings.Contains(d.report.String(), "did not finish within PREFLIGHT_TIMEOUT=20ms") {
			t.Fatalf("exit %d after the report\n%s\nwant %d after the timeout's finding", code, d.report, d.cfg.NodeFaultExitCode)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a hung gathering held the run past its deadline")
	}
	if d.finishedWith("late") != 0 || len(d.exited) != 0 {
		t.Error("the run was finished twice")
	}
}

// ctx cancelled before its deadline (a signal ending the run) is no
// deadline: nothing takes the run over, and the gathering finishes it.
func TestACancelledGatheringIsNotTakenOver(t *testing.T) {
	var d *deadlineRun
	d = newDeadlineRun(t, time.Hour, func(ctx context.Context, o gather.Options) (gather.Result, []string) {
		d.cancel()
		time.Sleep(10 * time.Millisecond) // room for a takeover to start, were there one
		return gathered(ctx, o)
	})
	done := make(chan int, 1)
	go func() { done <- d.execute() }()
	select {
	case code := <-done:
		if code != ExitOK || d.finishedWith("gathered") != 1 || len(d.exited) != 0 {
			t.Fatalf("code %d, exits %d: want the gathering's own result, and no exit", code, len(d.exited))
		}
	case code := <-d.exited:
		t.Fatalf("a cancelled context was taken for the deadline: exit %d", code)
	case <-time.After(10 * time.Second):
		t.Fatal("the gathering's goroutine did not finish the run: a cancellation was taken for the deadline")
	}
}

// manualDeadline is a context whose deadline passes when the test says.
type manualDeadline struct {
	context.Context
	done chan struct{}
}

func (c manualDeadline) Done() <-chan struct{} { return c.done }

func (c manualDeadline) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// A gathering that ends as the deadline passes, having finished in time,
// is finished once, with its own result, by whichever goroutine claimed
// the run.
func TestAGatheringEndingAtTheDeadlineIsFinishedOnce(t *testing.T) {
	for range 50 {
		ctx := manualDeadline{context.Background(), make(chan struct{})}
		d := newDeadlineRun(t, time.Hour, func(_ context.Context, o gather.Options) (gather.Result, []string) {
			g, _ := gather.Gather(ctx, o) // in time: the progress says it finished
			close(ctx.done)
			return g, []string{"gathered"}
		})
		d.ctx = ctx
		done := make(chan int, 1)
		go func() { done <- d.execute() }()
		select {
		case <-done:
		case <-d.exited:
		case <-time.After(10 * time.Second):
			t.Fatal("neither goroutine finished the run")
		}
		if n := d.finishedWith("gathered"); n != 1 {
			t.Fatalf("finished %d times with the gathering's own result, want once:\n%s", n, d.report)
		}
		time.Sleep(2 * time.Millisecond)
		if len(d.exited)+len(done) != 0 || strings.Count(d.report.String(), "Notes:") != 1 {
			t.Fatal("the run was finished twice")
		}
	}
}

// With the signals caught, a hung gathering runs beside the caller, which
// goes on at the deadline with what was gathered before it.
func TestAHungGatheringBesideIsCutAtTheDeadline(t *testing.T) {
	hang := make(chan struct{})
	defer close(hang)
	d := newDeadlineRun(t, 20*time.Millisecond, func(context.Context, gather.Options) (gather.Result, []string) {
		<-hang
		return gather.Result{}, []string{"late"}
	})
	done := make(chan result, 1)
	go func() { done <- d.gatherBeside() }()
	select {
	case r := <-done:
		if len(r.findings) != 1 || r.findings[0].ID != check.TimeoutID || len(r.warnings) != 0 {
			t.Fatalf("went on with %+v, want the partial result and the timeout's finding", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a hung gathering held the caller past its deadline")
	}
}

// Beside the caller, a gathering in time, or one cancelled before its
// deadline, gives its own result.
func TestAGatheringBesideGivesItsOwnResult(t *testing.T) {
	for _, cancelFirst := range []bool{false, true} {
		var d *deadlineRun
		d = newDeadlineRun(t, time.Hour, func(ctx context.Context, o gather.Options) (gather.Result, []string) {
			if cancelFirst {
				d.cancel()
				time.Sleep(5 * time.Millisecond)
			}
			return gathered(ctx, o)
		})
		if r := d.gatherBeside(); len(r.warnings) != 1 || r.warnings[0] != "gathered" {
			t.Errorf("cancelled first %v: %q, want the gathering's own result", cancelFirst, r.warnings)
		}
	}
}

// The gathering never runs on the process's first thread, which the kernel
// offers a signal to first, wherever the goroutine that starts it runs:
// started from the first thread itself, and from any goroutine, 200 times.
func TestTheGatheringNeverRunsOnTheFirstThread(t *testing.T) {
	var ran int
	d := newDeadlineRun(t, time.Hour, func(ctx context.Context, o gather.Options) (gather.Result, []string) {
		ran = unix.Gettid()
		return gathered(ctx, o)
	})
	gatherOn := func() int {
		d.gatherBeside()
		return ran
	}
	first := unix.Getpid()
	if ran := fromFirstThread(t, gatherOn); ran == first {
		t.Fatal("started from the first thread, the gathering ran there")
	}
	for range 200 {
		if ran := gatherOn(); ran == first {
			t.Fatal("the gathering ran on the first thread")
		}
	}
}

// fromFirstThread runs f on a goroutine locked to the process's first
// thread, found by starting goroutines until the scheduler puts one there.
func fromFirstThread(t *testing.T, f func() int) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		out := make(chan int, 1)
		there := make(chan bool, 1)
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if unix.Gettid() != unix.Getpid() {
				there <- false
				return
			}
			there <- true
			out <- f()
		}()
		if <-there {
			return <-out
		}
	}
	t.Fatal("no goroutine came to run on the first thread in 10 s")
	return 0
}
