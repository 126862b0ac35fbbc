package main

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// gatherWithin runs gather and returns what finish makes of its result, or
// of cutShort's when ctx's deadline cut the gathering short (cutShort says
// whether it did).
//
// Most of the gathering stops at ctx's deadline, wherever it waits on ctx
// (the probes), but a system call hung on a file system (a stalled FUSE
// snapshotter, a hard NFS mount) does not return, and the thread waiting
// in it keeps a caught signal pending until it does. The kernel offers a
// signal sent to the process to its first thread before any other, so
// where the gathering runs depends on whether the run catches the
// terminating signals (Config.catchesSignals):
//
//   - caught (as PID 1, when supervising, with a record to write): the
//     gathering runs on a goroutine locked to a thread other than the
//     first (gatherBeside), which stays free to take a signal
//     (TestSigtermEndsAHungPreflight, e2e);
//   - not caught: a terminating signal has the kernel's default action,
//     which ends every thread of the process wherever it waits, so the
//     gathering runs on the calling goroutine (gatherHere), which spares
//     the start a second thread (0.07-0.1 ms of a GPU-less start).
func gatherWithin(ctx context.Context, signalsCaught bool, gather func() result, cutShort func() (result, bool), finish func(result) int, exit func(int)) int {
	if signalsCaught {
		return finish(gatherBeside(ctx, gather, cutShort))
	}
	return gatherHere(ctx, gather, cutShort, finish, exit)
}

// gatherBeside runs gather off the first thread (offFirstThread), and waits
// for it or for ctx's deadline. Cancelled otherwise (a signal ending the
// run), it waits for the gathering, which the signal's exit ends.
func gatherBeside(ctx context.Context, gather func() result, cutShort func() (result, bool)) result {
	done := make(chan result, 1)
	go offFirstThread(func() { done <- gather() })
	var res result
	var finished bool
	select {
	case res = <-done:
		finished = true
	case <-ctx.Done():
	}
	if cut, ok := cutShort(); ok {
		return cut
	}
	if !finished {
		res = <-done // it finished as the deadline passed
	}
	return res
}

// gatherHere runs gather on the calling goroutine. If it has not returned
// by ctx's deadline, another goroutine takes the run over: it finishes with
// cutShort's result, what was gathered before the deadline, and ends the
// process with exit of the code, while the calling goroutine stays where it
// hangs. The first of the two to claim the run goes on; the other never
// does, so there is one decision and one record. A gathering that ended
// just as the deadline passed, not cut short, hands its result over. ctx
// cancelled otherwise (finish done with it) takes nothing over.
func gatherHere(ctx context.Context, gather func() result, cutShort func() (result, bool), finish func(result) int, exit func(int)) int {
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

// offFirstThread runs f on a thread other than the process's first, locked
// there so that it cannot move to the first thread while it runs. The
// gathering is the only part of a run that makes system calls a file system
// can hang (the others wait on a child, a pipe or a channel, and a signal
// interrupts those), so with it off the first thread that thread is always
// free to take a signal. A goroutine that starts on the first thread holds
// it, idle, while another runs f: no goroutine but the holder can run on a
// locked thread.
func offFirstThread(f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if unix.Gettid() == unix.Getpid() {
		done := make(chan struct{})
		go func() {
			offFirstThread(f)
			close(done)
		}()
		<-done
		return
	}
	f()
}
