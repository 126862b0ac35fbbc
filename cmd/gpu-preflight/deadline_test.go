package main

import (
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

// cut is a cutShort whose answer at the deadline is the given result.
func cut(atDeadline result, cutAtDeadline bool) func(bool) (result, bool) {
	return func(at bool) (result, bool) {
		if !at {
			return result{}, false
		}
		return atDeadline, cutAtDeadline
	}
}

func TestAGatheringInTimeIsFinishedOnItsGoroutine(t *testing.T) {
	d := newDeadlineRun()
	gathered := result{warnings: []string{"gathered"}}
	code := gatherWithin(time.Hour, func() result { return gathered }, cut(result{}, true), d.finish, d.exit)
	if code != 1 || len(d.finished) != 1 || (<-d.finished)[0] != "gathered" || len(d.exited) != 0 {
		t.Fatalf("code %d, exits %d: want gathered's result finished once, and no exit", code, len(d.exited))
	}
}

// A gathering that never returns (a system call on a hung file system)
// does not hold the run: at the deadline the timer's goroutine finishes
// with what was gathered before it and exits with the code.
func TestAHungGatheringIsFinishedAtTheDeadline(t *testing.T) {
	d := newDeadlineRun()
	hang := make(chan struct{})
	defer close(hang) // the hung goroutine then parks for good, as in the process
	partial := result{warnings: []string{"partial", "timed out"}, findings: []check.Finding{{ID: "preflight"}}}
	go gatherWithin(20*time.Millisecond, func() result { <-hang; return result{warnings: []string{"late"}} }, cut(partial, true), d.finish, d.exit)
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

// A gathering that ends as the deadline passes (not cut short) is finished
// once, with its own result, by whichever goroutine claimed the run.
func TestAGatheringEndingAtTheDeadlineIsFinishedOnce(t *testing.T) {
	for range 50 {
		d := newDeadlineRun()
		done := make(chan int, 1)
		go func() {
			done <- gatherWithin(time.Millisecond, func() result {
				time.Sleep(time.Millisecond)
				return result{warnings: []string{"gathered"}}
			}, cut(result{}, false), d.finish, d.exit)
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
	}
}
