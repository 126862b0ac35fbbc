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

// gather gathers and checks within PREFLIGHT_TIMEOUT. A system call hung
// on a file system never returns, and the kernel offers a signal to the
// first thread first: with signals caught the gathering runs off that
// thread; without, a signal's default action ends every thread, and it
// runs here, sparing the start a thread.
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

// cutShort is what was gathered before the deadline, and the finding that
// names what had not finished, when the deadline (not a cancellation) cut
// the gathering short.
func (r *run) cutShort() (result, bool) {
	pending, partial, late := r.opts.Progress.Late()
	if !late || !errors.Is(r.ctx.Err(), context.DeadlineExceeded) {
		return result{}, false
	}
	return result{facts: partial.Facts, visible: partial.Visible,
		findings: []check.Finding{check.TimedOut(time.Duration(r.cfg.Timeout), pending)}}, true
}

// gatherBeside gathers off the first thread and waits for it or the
// deadline; on a cancellation, for the gathering, which the signal ends.
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

// gatherHere gathers on this goroutine. At the deadline another takes the
// run over (takeOver) and this one stays where it hangs: the first to claim
// the run goes on, so there is one record; a gathering that ended in time
// as the deadline passed hands its result over.
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

// takeOver finishes the run at the deadline and ends the process.
func (r *run) takeOver(handed <-chan result) {
	res, cut := r.cutShort()
	if !cut {
		res = <-handed
	}
	r.exit(r.finish(res))
}

// offFirstThread gathers on a locked thread other than the first; a
// goroutine that starts on the first holds it, idle, meanwhile.
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
