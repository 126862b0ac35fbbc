package main

import (
	"sync/atomic"
	"time"
)

// gatherWithin runs gather on the calling goroutine and returns what finish
// makes of its result, or of cutShort's when the deadline cut the
// gathering short (cutShort(false) says whether it did).
//
// The gathering stops at its deadline wherever it waits on its context (the
// probes), but a system call on a hung file system does not return: then,
// when after has passed, the timer's goroutine takes the run over. It
// finishes with cutShort(true), what was gathered before the deadline, and
// ends the process with exit of the code, while the calling goroutine stays
// where it hangs. The first of the two to claim the run goes on; the other
// never does, so there is one decision and one record. A gathering that
// ended just as the deadline passed (cutShort(true) is false) hands its
// result to the timer's goroutine.
//
// The gathering runs here rather than on a goroutine of its own, which
// would wake a second thread and spread the heap's first spans over both
// CPUs (0.07 ms of a GPU-less start).
func gatherWithin(after time.Duration, gather func() result, cutShort func(atDeadline bool) (result, bool), finish func(result) int, exit func(int)) int {
	var claimed atomic.Bool
	handed := make(chan result, 1)
	timer := time.AfterFunc(after, func() {
		if !claimed.CompareAndSwap(false, true) {
			return
		}
		res, cut := cutShort(true)
		if !cut {
			res = <-handed
		}
		exit(finish(res))
	})
	res := gather()
	if !claimed.CompareAndSwap(false, true) {
		handed <- res
		select {} // the timer's goroutine has the run, and ends the process
	}
	timer.Stop()
	if cut, ok := cutShort(false); ok {
		res = cut
	}
	return finish(res)
}
