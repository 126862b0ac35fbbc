package app

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
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

// slowWrite is how long a signal waits for a record write before it
// says so in the log; it waits on however long the write takes.
const slowWrite = 2 * time.Second

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

// exitOnSignal ends the process for sig once no record write is in
// flight, completing a record already written: however slow the write, the
// record never says a command ran that the signal stopped first.
func (r *run) exitOnSignal(sig syscall.Signal) {
	code := initproc.SignalBase + int(sig)
	slow := time.AfterFunc(slowWrite, func() {
		r.log.Warn().Str("signal", sig.String()).Msg("signal during a record write: exiting once the record says the command never ran")
	})
	r.gate.writing <- struct{}{}
	slow.Stop()
	r.cancel()
	if r.gate.written != nil {
		why := fmt.Sprintf("gpu-preflight received %s before it started the command, and exited with %d: the command never ran", unix.SignalName(sig), code)
		r.finishRecord(*r.gate.written, code, int(sig), errors.New(why))
	}
	r.log.Warn().Str("signal", sig.String()).Int("exitCode", code).Msg("signal during preflight: exiting")
	r.out.Flush()
	os.Exit(code)
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
// process here.
func (r *run) release() { r.handBack(false) }

// releaseForExec gives the signals the kernel's default action before
// signal.Stop: Go's runtime re-raises a signal on a thread an execve(2) may
// destroy first. One sent between here and execve(2) kills gpu-preflight,
// and its record reads as if the command ran.
func (r *run) releaseForExec() { r.handBack(true) }

func (r *run) handBack(kernelDefault bool) {
	g := &r.gate
	if !g.catching {
		return
	}
	close(g.stop)
	<-g.stopped
	if kernelDefault {
		r.defaultActions()
	}
	signal.Stop(g.ch) // until it returns, a signal still lands in ch
	select {
	case sig := <-g.ch:
		r.exitOnSignal(sig.(syscall.Signal))
	default:
	}
}

// defaultActions sets the kernel's default actions, first ending the run
// for a signal sent but not yet delivered: the kernel wakes one thread for
// it, which on a busy machine may run only after the default is set and
// then die of it. Blocked on this thread, such a signal shows as pending.
func (r *run) defaultActions() {
	runtime.LockOSThread() // the exec runs here, with this thread's mask restored
	var set, old, pending unix.Sigset_t
	for _, sig := range terminatingSignals {
		word, bit := sigsetBit(sig.(syscall.Signal))
		set.Val[word] |= bit
	}
	unix.PthreadSigmask(unix.SIG_BLOCK, &set, &old)
	unix.RawSyscall(unix.SYS_RT_SIGPENDING, uintptr(unsafe.Pointer(&pending)), 8, 0)
	for _, sig := range terminatingSignals {
		if word, bit := sigsetBit(sig.(syscall.Signal)); pending.Val[word]&bit != 0 {
			r.exitOnSignal(sig.(syscall.Signal))
		}
	}
	for _, sig := range terminatingSignals {
		if !signal.Ignored(sig) {
			setKernelDefault(sig.(syscall.Signal))
		}
	}
	unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
}

// sigsetBit is where sig sits in a sigset of 64-bit words, as the kernel
// lays it out (signal n is bit n-1).
func sigsetBit(sig syscall.Signal) (word int, bit uint64) {
	n := int(sig) - 1
	return n / 64, 1 << (n % 64)
}

// setKernelDefault sets SIG_DFL with rt_sigaction(2), which no Go API
// does: a zeroed sigaction is SIG_DFL on every layout of the struct.
func setKernelDefault(sig syscall.Signal) {
	var act [4]uint64
	unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
}
