package main

import (
	"context"
	"testing"
	"time"

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
	code := gatherWithin(ctx, func() result { return gathered }, cutAfter(ctx, result{}, true), d.finish, d.exit)
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
	go gatherWithin(ctx, func() result { <-hang; return result{warnings: []string{"late"}} }, cutAfter(ctx, partial, true), d.finish, d.exit)
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
		done <- gatherWithin(ctx, func() result {
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
			done <- gatherWithin(ctx, func() result {
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
