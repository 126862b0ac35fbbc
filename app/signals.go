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
// write, then for the record's completion: a hung volume is abandoned.
const SignalWriteGrace = 2 * time.Second

// signalGate ends a run on a terminating signal with 128+N, never in the
// middle of a record write, completing a record already written.
type signalGate struct {
	catching bool // false: the signals have the kernel's default action
	// writing holds a token during a write; the handler takes it for good.
	writing chan struct{}
	armed   chan struct{} // closed once the handler catches the signals
	ch      chan os.Signal
	stop    chan struct{}
	stopped chan struct{}
	written *report.Record // as stored, set under the token
}

// catchSignals starts the handler, which registers the signals itself so
// that os/signal's set-up runs beside the gathering; a record write waits
// for it (hold).
func (r *run) catchSignals() {
	r.gate = signalGate{catching: true, writing: make(chan struct{}, 1), ch: make(chan os.Signal, len(terminatingSignals)),
		armed: make(chan struct{}), stop: make(chan struct{}), stopped: make(chan struct{})}
	go r.handleSignals()
}

func (r *run) handleSignals() {
	g := &r.gate
	defer close(g.stopped)
	for _, sig := range terminatingSignals {
		if !signal.Ignored(sig) { // nohup's SIGHUP stays ignored, for the command too
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

// defaultActionGate gives each terminating signal the kernel's default
// action now, as after the exec, so none is lost meanwhile.
func defaultActionGate() signalGate {
	for _, sig := range terminatingSignals {
		if !signal.Ignored(sig) {
			setKernelDefault(sig.(syscall.Signal))
		}
	}
	return signalGate{}
}

// exitOnSignal ends the process for sig, taking the token before it
// cancels the gathering, which then starts no write.
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

// completeOnSignal stores rec again, saying the command never ran.
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

// hold takes the write token (or blocks until a signal's exit).
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

// release hands the signals back; one that came before still ends the
// process here. One between the release and execve(2) kills gpu-preflight,
// and its record reads as if the command ran.
func (r *run) release() { r.handBack(false) }

// releaseForExec sets the kernel's default action before signal.Stop: Go's
// runtime re-raises a signal on a thread an execve(2) may destroy first.
func (r *run) releaseForExec() { r.handBack(true) }

func (r *run) handBack(kernelDefault bool) {
	g := &r.gate
	if !g.catching {
		return
	}
	close(g.stop)
	<-g.stopped
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

// setKernelDefault sets SIG_DFL with rt_sigaction(2), which no Go API
// does: a zeroed sigaction is SIG_DFL on every layout of the struct.
func setKernelDefault(sig syscall.Signal) {
	var act [4]uint64
	unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
}
