package main

import (
	"context"
	"errors"
	"sync/atomic"
)

// gatherWithin runs gather on the calling goroutine and returns what finish
// makes of its result, or of cutShort's when ctx's deadline cut the
// gathering short (cutShort says whether it did).
//
// The gathering stops at ctx's deadline wherever it waits on ctx (the
// probes), but a system call on a hung file system does not return: then,
// once the deadline has passed, another goroutine takes the run over. It
// finishes with cutShort's result, what was gathered before the deadline,
// and ends the process with exit of the code, while the calling goroutine
// stays where it hangs. The first of the two to claim the run goes on; the
// other never does, so there is one decision and one record. A gathering
// that ended just as the deadline passed, not cut short, hands its result
// over. ctx cancelled otherwise (a signal ending the run, or finish done
// with it) takes nothing over.
//
// The gathering runs here rather than on a goroutine of its own, which
// would wake a second thread and spread the heap's first spans over both
// CPUs (0.07 ms of a GPU-less start).
func gatherWithin(ctx context.Context, gather func() result, cutShort func() (result, bool), finish func(result) int, exit func(int)) int {
	var claimed atomic.Bool
	handed := make(chan result, 1)
	stop := context.AfterFunc(ctx, func() {
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) || !claimed.CompareAndSwap(false, true) {
			return
		}
		res, cut := cutShort()
		if !cut {
			res = <-handed
		}
		exit(finish(res))
	})
	res := gather()
	if !claimed.CompareAndSwap(false, true) {
		handed <- res
		select {} // the deadline's goroutine has the run, and ends the process
	}
	stop()
	if cut, ok := cutShort(); ok {
		res = cut
	}
	return finish(res)
}
