package app

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
)

// gather gathers the facts and runs the checks within PREFLIGHT_TIMEOUT.
// Most of the gathering stops at the deadline, but a system call hung on a
// file system (a stalled FUSE snapshotter, a hard NFS mount) does not
// return, and the kernel offers a signal to the process's first thread
// before any other. So where the gathering runs depends on the gate:
//
//   - signals caught: on a thread other than the first (gatherBeside), so
//     that one stays free to take a signal;
//   - not caught: a signal's default action ends every thread wherever it
//     waits, so the gathering runs here (gatherHere), which spares the
//     start a thread.
func (r *run) gather() result {
	if r.gate.catching {
		return r.gatherBeside()
	}
	return r.gatherHere()
}

// checked is the gathering proper: the facts, and the checks on them.
func (r *run) checked() result {
	g, warnings := r.gatherFacts(r.ctx, r.opts)
	in := r.cfg.checkInput(g)
	return result{in.Facts, in.Visible, check.Run(in), warnings}
}

// cutShort is what was gathered before the deadline, with the one finding
// that names what had not finished, when the deadline cut the gathering
// short; a cancellation (a signal ending the run) is no deadline.
func (r *run) cutShort() (result, bool) {
	pending, partial, late := r.opts.Progress.Late()
	if !late || !errors.Is(r.ctx.Err(), context.DeadlineExceeded) {
		return result{}, false
	}
	return result{facts: partial.Facts, visible: partial.Visible,
		findings: []check.Finding{check.TimedOut(time.Duration(r.cfg.Timeout), pending)}}, true
}

// gatherBeside runs the gathering off the first thread and waits for it or
// for the deadline. Cancelled otherwise, it waits for the gathering, which
// the signal's exit ends.
func (r *run) gatherBeside() result {
	done := make(chan result, 1)
	go offFirstThread(r, done)
	var res result
	var finished bool
	select {
	case res = <-done:
		finished = true
	case <-r.ctx.Done():
	}
	if cut, ok := r.cutShort(); ok {
		return cut
	}
	if !finished {
		res = <-done // it finished as the deadline passed
	}
	return res
}

// gatherHere runs the gathering on this goroutine. If it has not returned
// by the deadline, the deadline's goroutine takes the run over (takeOver)
// and this one stays where it hangs. The first of the two to claim the run
// goes on, so there is one decision and one record; a gathering that ended
// just as the deadline passed, not cut short, hands its result over.
func (r *run) gatherHere() result {
	var claimed atomic.Bool
	handed := make(chan result, 1)
	stop := context.AfterFunc(r.ctx, func() {
		if errors.Is(r.ctx.Err(), context.DeadlineExceeded) && claimed.CompareAndSwap(false, true) {
			r.takeOver(handed)
		}
	})
	res := r.checked()
	if !claimed.CompareAndSwap(false, true) {
		handed <- res
		select {} // the deadline's goroutine has the run, and ends the process
	}
	stop()
	if cut, ok := r.cutShort(); ok {
		return cut
	}
	return res
}

// takeOver finishes the run at the deadline, with what was gathered before
// it, and ends the process with the run's exit code.
func (r *run) takeOver(handed <-chan result) {
	res, cut := r.cutShort()
	if !cut {
		res = <-handed
	}
	r.exit(r.finish(res))
}

// offFirstThread gathers on a thread other than the process's first, locked
// there for the gathering's system calls (the rest of a run waits on a
// child, a pipe or a channel, which a signal interrupts). A goroutine that
// starts on the first thread holds it, idle, while another gathers.
func offFirstThread(r *run, done chan<- result) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if unix.Gettid() == unix.Getpid() {
		held := make(chan struct{})
		go func() {
			offFirstThread(r, done)
			close(held)
		}()
		<-held
		return
	}
	done <- r.checked()
}
