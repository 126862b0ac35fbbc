package harness

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Linear fails t when large, which does k times the work of small, takes
// k*k/4 times as long or more: what a rescan of the rest of the input
// for each step costs, where a linear pass takes about k times as long.
// Each runs reps times, interleaved, timed by the CPU time of the thread
// it runs on, and counts its fastest run: a loaded machine preempts a long
// run more often than a short one, which would stretch wall times unevenly.
// No absolute time is held.
func Linear(t testing.TB, what string, k float64, small, large func()) {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const reps = 3
	fastSmall, fastLarge := time.Duration(1<<63-1), time.Duration(1<<63-1)
	for range reps {
		fastSmall = min(fastSmall, threadCPU(t, small))
		fastLarge = min(fastLarge, threadCPU(t, large))
	}
	ratio := float64(fastLarge) / float64(max(fastSmall, time.Microsecond))
	t.Logf("%s: %v of CPU for %gx the input of %v (%.1fx)", what, fastLarge, k, fastSmall, ratio)
	if ratio >= k*k/4 {
		t.Errorf("%s: %gx the input took %.1fx the CPU time (%v against %v), want near %gx: the work grows faster than the input",
			what, k, ratio, fastLarge, fastSmall, k)
	}
}

// threadCPU returns the CPU time the calling thread spent in f.
func threadCPU(t testing.TB, f func()) time.Duration {
	var before, after unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &before); err != nil {
		t.Fatal(err)
	}
	f()
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &after); err != nil {
		t.Fatal(err)
	}
	return time.Duration(after.Nano() - before.Nano())
}

// WithinDeadline fails t when a run cut at deadline took longer than the
// deadline and the slack it needs to end: a second, or ten times the same
// kind of run without the hang, whichever is longer. before is such a run
// timed just before; when took is past its slack, again times one more,
// now, and the longer of the two counts, so a machine that got busier
// during the run stretches the slack with it.
func WithinDeadline(t testing.TB, what string, took, deadline, before time.Duration, again func() time.Duration) {
	t.Helper()
	slack := func(reference time.Duration) time.Duration { return max(time.Second, 10*reference) }
	if took <= deadline+slack(before) {
		return
	}
	reference := max(before, again())
	if took > deadline+slack(reference) {
		t.Errorf("%s took %v with a %v deadline, more than %v past it (runs without the hang took %v before and %v after)",
			what, took, deadline, slack(reference), before, reference)
	}
}
