// Package initproc does a container init's duties for one command, as tini
// does (docs/sources.md, "PID 1 and signals"). Catch, let go of the caller's
// own signal handlers, then Run: no signal is lost in between.
package initproc

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Command is the program Run starts.
type Command struct {
	Path string   // the executable, already looked up
	Argv []string // argv[0] first
	Env  []string // KEY=value, as execve(2) takes it
	// SignalGroup forwards to the command's process group (tini -g).
	SignalGroup bool
}

// Exit is how the command ended, as a shell reports it.
type Exit struct {
	Code   int // the exit status, or SignalBase+N when signal N killed it
	Signal int // N, or 0
}

// SignalBase is the shell's (POSIX "Exit Status for Commands").
const SignalBase = 128

// Logger hears what an Init did, and makes the values safe to log.
type Logger interface{ Log(Event) }

// Event is one thing an Init did, or (Warning) could not do.
type Event struct {
	Warning bool
	Msg     string
	Err     error
	Signal  string
	PID     int
	Command string
}

type Init struct {
	log   Logger
	sigs  chan os.Signal
	group bool
}

// Catch makes this a child subreaper that catches what it will forward (log
// may be nil); a signal inherited as ignored stays ignored, as under exec.
func Catch(log Logger) *Init {
	in := &Init{log: log, sigs: make(chan os.Signal, 64)}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		in.note(Event{Warning: true, Err: err, Msg: "cannot become a child subreaper; orphaned processes of the command will not be reaped by gpu-preflight"})
	}
	ignored, err := ignoredSignals()
	if err != nil {
		in.note(Event{Err: err, Msg: "cannot tell which signals are ignored; forwarding all"})
	}
	caught := append(forwardedSignals(ignored), unix.SIGCHLD)
	if ignored&(1<<(unix.SIGPIPE-1)) == 0 {
		// Caught, not forwarded: a write to a closed stderr must not end us.
		caught = append(caught, unix.SIGPIPE)
	}
	signal.Notify(in.sigs, caught...)
	return in
}

// Run starts cmd in its own process group, with our terminal when we have
// it, forwards signals, reaps, and returns how cmd ended, as tini does. An
// error means cmd never started; it Is os.ErrNotExist for a shell's 127.
func (in *Init) Run(cmd Command) (Exit, error) {
	defer signal.Stop(in.sigs)
	in.group = cmd.SignalGroup
	pid, foreground, err := startChild(cmd)
	if err != nil {
		return Exit{}, err
	}
	if foreground {
		// In the background now: writing the terminal must not stop us.
		signal.Ignore(unix.SIGTTIN, unix.SIGTTOU)
	}
	in.note(Event{PID: pid, Command: cmd.Argv[0], Msg: "supervising the command"})

	status := in.waitMain(pid)
	if foreground {
		_ = unix.IoctlSetPointerInt(0, unix.TIOCSPGRP, unix.Getpgrp())
	}
	return exitOf(status), nil
}

// notForwarded are tini's exceptions, and signals no sender means for cmd.
var notForwarded = map[syscall.Signal]string{
	unix.SIGKILL: "cannot be caught",
	unix.SIGSTOP: "cannot be caught",
	unix.SIGCHLD: "means a child changed state: reap",
	unix.SIGFPE:  "fault", unix.SIGILL: "fault", unix.SIGSEGV: "fault", unix.SIGBUS: "fault",
	unix.SIGABRT: "fault", unix.SIGTRAP: "fault", unix.SIGSYS: "fault",
	unix.SIGTTIN: "terminal job control", unix.SIGTTOU: "terminal job control",
	unix.SIGURG:        "Go runtime preemption",
	unix.SIGPIPE:       "raised by our own writes to a closed stderr",
	syscall.Signal(32): "NPTL's cancellation signal", syscall.Signal(33): "NPTL's setxid signal",
}

const sigrtmax = 64 // the highest signal number on Linux

// forwardedSignals are those Run forwards, but the ignored (bit N-1: N).
func forwardedSignals(ignored uint64) []os.Signal {
	var sigs []os.Signal
	for n := syscall.Signal(1); n <= sigrtmax; n++ {
		if _, keep := notForwarded[n]; !keep && ignored&(1<<(n-1)) == 0 {
			sigs = append(sigs, n)
		}
	}
	return sigs
}

// ignoredSignals reads SigIgn in /proc/self/status (proc(5)).
func ignoredSignals() (uint64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	return 0, errors.New("/proc/self/status has no SigIgn line")
}

// reapInterval bounds how long a child whose SIGCHLD was dropped waits.
const reapInterval = time.Second

// startChild forks and execs cmd, descriptors 0 to 2 as exec leaves them.
func startChild(cmd Command) (pid int, foreground bool, err error) {
	files := make([]uintptr, 3)
	for fd := range files {
		files[fd] = uintptr(fd)
		if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC != 0 {
			files[fd] = ^uintptr(0) // -1: closed in the child
		}
	}
	attr := &syscall.ProcAttr{Env: cmd.Env, Files: files, Sys: &syscall.SysProcAttr{Setpgid: true}}
	if pgrp, err := unix.IoctlGetInt(0, unix.TIOCGPGRP); err == nil && pgrp == unix.Getpgrp() {
		attr.Sys.Foreground, attr.Sys.Ctty = true, 0
		foreground = true
	}
	pid, err = syscall.ForkExec(cmd.Path, cmd.Argv, attr)
	if err != nil {
		return 0, false, fmt.Errorf("%s: %w", cmd.Path, err)
	}
	return pid, foreground, nil
}

// waitMain forwards signals and reaps until pid exits.
func (in *Init) waitMain(pid int) unix.WaitStatus {
	tick := time.NewTicker(reapInterval)
	defer tick.Stop()
	for {
		select {
		case s := <-in.sigs:
			if _, keep := notForwarded[s.(syscall.Signal)]; !keep {
				in.forward(pid, s.(syscall.Signal))
			}
		case <-tick.C:
		}
		if status, done := in.reap(pid); done {
			return status
		}
	}
}

// forward sends s to the child, or its group while it leads it (setsid).
func (in *Init) forward(pid int, s syscall.Signal) {
	target := pid
	if pgid, err := unix.Getpgid(pid); in.group && err == nil && pgid == pid {
		target = -pid
	}
	if err := unix.Kill(target, s); err != nil && !errors.Is(err, unix.ESRCH) {
		in.note(Event{Warning: true, Err: err, Signal: s.String(), PID: target, Msg: "cannot forward signal"})
		return
	}
	in.note(Event{Signal: s.String(), PID: target, Msg: "signal forwarded"})
}

// reap collects every exited child without blocking; done when main was one.
func (in *Init) reap(main int) (status unix.WaitStatus, done bool) {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if pid <= 0 || err != nil {
			return status, done
		}
		if pid == main {
			status, done = ws, true
			continue
		}
		in.note(Event{PID: pid, Msg: "reaped an orphaned process"})
	}
}

func (in *Init) note(e Event) {
	if in.log != nil {
		in.log.Log(e)
	}
}

func exitOf(ws unix.WaitStatus) Exit {
	if ws.Signaled() {
		return Exit{Code: SignalBase + int(ws.Signal()), Signal: int(ws.Signal())}
	}
	return Exit{Code: ws.ExitStatus()}
}
