package main

import (
	"context"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
)

// deadlineRun records what gatherWithin did with one gathering.
type deadlineRun struct {
	finished chan []string // the warnings of each result finish was given
	exited   chan int
}

func newDeadlineRun() *deadlineRun {
	return &deadlineRun{finished: make(chan []string, 2), exited: make(chan int, 2)}
}

func (d *deadlineRun) finish(r result) int { d.finished <- r.warnings; return len(r.warnings) }
func (d *deadlineRun) exit(code int)       { d.exited <- code }

// cutAfter is a cutShort that says the gathering was cut short, with
// partial, once ctx's deadline has passed and cut is true.
func cutAfter(ctx context.Context, partial result, cut bool) func() (result, bool) {
	return func() (result, bool) {
		if ctx.Err() != context.DeadlineExceeded || !cut {
			return result{}, false
		}
		return partial, true
	}
}

func TestAGatheringInTimeIsFinishedOnItsGoroutine(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	d := newDeadlineRun()
	gathered := result{warnings: []string{"gathered"}}
	code := gatherHere(ctx, func() result { return gathered }, cutAfter(ctx, result{}, true), d.finish, d.exit)
	if code != 1 || len(d.finished) != 1 || (<-d.finished)[0] != "gathered" || len(d.exited) != 0 {
		t.Fatalf("code %d, exits %d: want gathered's result finished once, and no exit", code, len(d.exited))
	}
}

// A gathering that never returns (a system call on a hung file system)
// does not hold the run: at the deadline another goroutine finishes it
// with what was gathered before and exits with the code.
func TestAHungGatheringIsFinishedAtTheDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	d := newDeadlineRun()
	hang := make(chan struct{})
	defer close(hang) // the hung goroutine then parks for good, as in the process
	partial := result{warnings: []string{"partial", "timed out"}, findings: []check.Finding{{ID: "preflight"}}}
	go gatherHere(ctx, func() result { <-hang; return result{warnings: []string{"late"}} }, cutAfter(ctx, partial, true), d.finish, d.exit)
	select {
	case code := <-d.exited:
		if w := <-d.finished; code != 2 || w[0] != "partial" {
			t.Fatalf("exit %d after finishing %q, want 2 after the partial result", code, w)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a hung gathering held the run past its deadline")
	}
	if len(d.finished) != 0 {
		t.Error("the run was finished twice")
	}
}

// ctx cancelled before its deadline (a signal ending the run) is no
// deadline: nothing takes the run over, and the gathering finishes it.
func TestACancelledGatheringIsNotTakenOver(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	d := newDeadlineRun()
	done := make(chan int, 1)
	go func() {
		done <- gatherHere(ctx, func() result {
			cancel()
			time.Sleep(10 * time.Millisecond) // room for a takeover to start, were there one
			return result{warnings: []string{"gathered"}}
		}, cutAfter(ctx, result{warnings: []string{"cut", "short"}}, true), d.finish, d.exit)
	}()
	select {
	case code := <-done:
		if code != 1 || (<-d.finished)[0] != "gathered" || len(d.exited) != 0 {
			t.Fatalf("code %d, exits %d: want the gathering's own result, and no exit", code, len(d.exited))
		}
	case code := <-d.exited:
		t.Fatalf("a cancelled context was taken for the deadline: exit %d", code)
	case <-time.After(10 * time.Second):
		t.Fatal("the gathering's goroutine did not finish the run: a cancellation was taken for the deadline")
	}
}

// A gathering that ends as the deadline passes, not cut short, is finished
// once, with its own result, by whichever goroutine claimed the run.
func TestAGatheringEndingAtTheDeadlineIsFinishedOnce(t *testing.T) {
	for range 50 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		d := newDeadlineRun()
		done := make(chan int, 1)
		go func() {
			done <- gatherHere(ctx, func() result {
				time.Sleep(time.Millisecond)
				return result{warnings: []string{"gathered"}}
			}, cutAfter(ctx, result{}, false), d.finish, d.exit)
		}()
		select {
		case <-done:
		case <-d.exited:
		case <-time.After(10 * time.Second):
			t.Fatal("neither goroutine finished the run")
		}
		if w := <-d.finished; w[0] != "gathered" {
			t.Fatalf("finished %q, want the gathering's own result", w)
		}
		time.Sleep(2 * time.Millisecond)
		if len(d.finished) != 0 {
			t.Fatal("the run was finished twice")
		}
		cancel()
	}
}

// With the signals caught, a hung gathering runs beside the caller, which
// goes on at the deadline with what was gathered before it.
func TestAHungGatheringBesideIsCutAtTheDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	hang := make(chan struct{})
	defer close(hang)
	partial := result{warnings: []string{"partial"}}
	done := make(chan result, 1)
	go func() {
		done <- gatherBeside(ctx, func() result { <-hang; return result{warnings: []string{"late"}} }, cutAfter(ctx, partial, true))
	}()
	select {
	case r := <-done:
		if r.warnings[0] != "partial" {
			t.Fatalf("went on with %q, want the partial result", r.warnings)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a hung gathering held the caller past its deadline")
	}
}

// Beside the caller, a gathering in time, or one cancelled before its
// deadline, gives its own result.
func TestAGatheringBesideGivesItsOwnResult(t *testing.T) {
	for _, cancelFirst := range []bool{false, true} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		r := gatherBeside(ctx, func() result {
			if cancelFirst {
				cancel()
				time.Sleep(5 * time.Millisecond)
			}
			return result{warnings: []string{"gathered"}}
		}, cutAfter(ctx, result{warnings: []string{"cut"}}, true))
		cancel()
		if r.warnings[0] != "gathered" {
			t.Errorf("cancelled first %v: %q, want the gathering's own result", cancelFirst, r.warnings)
		}
	}
}

// The gathering never runs on the process's first thread, which the kernel
// offers a signal to first, wherever the goroutine that starts it runs:
// started from the first thread itself, and from any goroutine, 200 times.
func TestTheGatheringNeverRunsOnTheFirstThread(t *testing.T) {
	gatherOn := func() int {
		var ran int
		gatherBeside(context.Background(), func() result {
			ran = unix.Gettid()
			return result{}
		}, func() (result, bool) { return result{}, false })
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
