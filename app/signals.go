package app

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/internal/initproc"
	"github.com/gpu-preflight/gpu-preflight/report"
)

// terminatingSignals end gpu-preflight with 128+N while it checks; after
// exec they belong to the command.
var terminatingSignals = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT}

// SignalWriteGrace bounds how long a terminating signal waits for a record
// write under way, then for the record's completion with the signal: a
// write stalled longer (a hung volume) is abandoned.
const SignalWriteGrace = 2 * time.Second

// signalGate is how a run that catches the terminating signals ends on
// one: with 128+N, never in the middle of a record write, and with a record
// already written completed to say the command never ran.
type signalGate struct {
	catching bool // false: the signals have the kernel's default action
	// writing holds a token while a record or the termination message is
	// written. The handler takes it and never gives it back, so a write
	// either completes before the exit or never starts.
	writing chan struct{}
	armed   chan struct{} // closed once the handler catches the signals
	ch      chan os.Signal
	stop    chan struct{}
	stopped chan struct{}
	// written is the record as stored, set under the token: the one a
	// signal completes.
	written *report.Record
}

// catchSignals starts the handler. Its goroutine registers the signals
// itself, so that os/signal's set-up (two threads, a round trip per
// signal) runs beside the gathering; until then a signal has its default
// action, and a record write waits for the registration (hold).
func (r *run) catchSignals() {
	r.gate = signalGate{catching: true, writing: make(chan struct{}, 1), ch: make(chan os.Signal, len(terminatingSignals)),
		armed: make(chan struct{}), stop: make(chan struct{}), stopped: make(chan struct{})}
	go r.handleSignals()
}

func (r *run) handleSignals() {
	g := &r.gate
	defer close(g.stopped)
	for _, sig := range terminatingSignals {
		// One inherited as ignored (nohup's SIGHUP) stays ignored, as it
		// will for the command.
		if !signal.Ignored(sig) {
			signal.Notify(g.ch, sig)
		}
	}
	close(g.armed)
	select {
	case sig := <-g.ch:
		r.exitOnSignal(sig.(syscall.Signal))
	case <-g.stop:
	}
}

// defaultActionGate is the gate of a run that catches no signal: each
// terminating signal gets the kernel's default action now, the one it has
// once the command is exec'd, so until then a signal ends gpu-preflight as
// it would end the command, and none is lost.
func defaultActionGate() signalGate {
	for _, sig := range terminatingSignals {
		if !signal.Ignored(sig) {
			setKernelDefault(sig.(syscall.Signal))
		}
	}
	return signalGate{}
}

// exitOnSignal ends the process for sig. The token is taken before the
// probe is cancelled, so the cancelled gathering starts no record write.
func (r *run) exitOnSignal(sig syscall.Signal) {
	code := initproc.SignalBase + int(sig)
	select {
	case r.gate.writing <- struct{}{}:
		r.cancel()
		if r.gate.written != nil {
			r.completeOnSignal(*r.gate.written, sig)
		}
	case <-time.After(SignalWriteGrace):
		r.cancel()
		r.log.Warn().Dur("waited", SignalWriteGrace).Msg("a record write did not finish in time: exiting without it")
	}
	r.log.Warn().Str("signal", sig.String()).Int("exitCode", code).Msg("signal during preflight: exiting")
	r.out.Flush()
	os.Exit(code)
}

// completeOnSignal stores rec again, saying the command never ran, within
// SignalWriteGrace.
func (r *run) completeOnSignal(rec report.Record, sig syscall.Signal) {
	code := initproc.SignalBase + int(sig)
	why := fmt.Sprintf("gpu-preflight received %s before it started the command, and exited with %d: the command never ran", unix.SignalName(sig), code)
	done := make(chan struct{})
	go func() {
		r.finishRecord(rec, code, int(sig), errors.New(why))
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(SignalWriteGrace):
		r.log.Warn().Dur("waited", SignalWriteGrace).Msg("the record could not be completed with the signal in time: it still reads as if the command ran")
	}
}

// hold takes the write token, or blocks until the exit when a signal is
// ending the process; letGo gives it back.
func (g *signalGate) hold() {
	if g.catching {
		<-g.armed
		g.writing <- struct{}{}
	}
}

func (g *signalGate) letGo() {
	if g.catching {
		<-g.writing
	}
}

// release hands the signals back: to their default action, then to the
// command after exec, or to supervise, which catches them first. A signal
// that came before, even one the handler had not taken yet, still ends the
// process here. One in the microseconds between the release and execve(2)
// kills gpu-preflight (128+N, as under any exec), and the record written
// before still reads as if the command ran.
func (r *run) release() { r.handBack(false) }

// releaseForExec is release for an exec: the kernel's default action is
// set before signal.Stop. Left to Go's runtime, a signal is re-raised by a
// runtime thread that an execve(2) on another thread can destroy first,
// and the command would start as if no signal had come.
func (r *run) releaseForExec() { r.handBack(true) }

func (r *run) handBack(kernelDefault bool) {
	g := &r.gate
	if !g.catching {
		return
	}
	close(g.stop)
	<-g.stopped // the handler has returned without a signal
	if kernelDefault {
		for _, sig := range terminatingSignals {
			if !signal.Ignored(sig) {
				setKernelDefault(sig.(syscall.Signal))
			}
		}
	}
	signal.Stop(g.ch) // until it returns, a signal still lands in ch
	select {
	case sig := <-g.ch:
		r.exitOnSignal(sig.(syscall.Signal))
	default:
	}
}

// setKernelDefault sets sig's disposition to SIG_DFL with rt_sigaction(2),
// which no Go API does. A zeroed kernel sigaction is SIG_DFL with no flags
// and an empty mask, on every layout of the struct.
func setKernelDefault(sig syscall.Signal) {
	var act [4]uint64
	unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
}
