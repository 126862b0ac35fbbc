// Package initproc does what a container's init does for the one command it
// runs: it starts the command as a child, forwards the signals sent to the
// init, reaps every child that exits (the command's orphans included) and
// reports how the command ended, as tini does (krallin/tini src/tini.c,
// summarised in docs/sources.md, "PID 1 and signals"). gpu-preflight uses
// it in supervise mode; what the run's record says about the outcome is the
// command's business, not this package's.
//
// The calls come in two steps so that no signal is lost between a caller's
// own handler and the child's start:
//
//	in := initproc.Catch(log)   // subreaper; signals are caught from here on (log may be nil)
//	// ... the caller lets go of its own handlers ...
//	exit, err := in.Run(initproc.Command{Path: path, Argv: argv, Env: env})
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
	// SignalGroup forwards each signal to the command's process group
	// instead of its pid alone (tini's -g): to every process the command
	// started that stayed in its group, a shell's background workers say.
	SignalGroup bool
}

// Exit is how the command ended, as a shell reports it.
type Exit struct {
	// Code is the command's exit status, or 128+N when signal N killed it.
	Code int
	// Signal is N, or 0 when the command exited.
	Signal int
}

// SignalBase is added to a signal's number for the exit code of a command
// that signal killed (the shell's rule, POSIX "Exit Status for Commands").
const SignalBase = 128

// Logger hears what an Init did, or could not do. Values come from outside
// (the command's name, an error): the logger makes them safe to log.
type Logger interface{ Log(Event) }

// Event is one thing an Init did (a debug note) or could not do (a
// warning). Fields that do not apply are empty.
type Event struct {
	Warning bool
	Msg     string
	Err     error
	Signal  string
	PID     int
	Command string
}

// Init is a process doing an init's duties for one command.
type Init struct {
	log   Logger
	sigs  chan os.Signal
	group bool
}

// Catch makes this process a child subreaper and catches every signal it
// will forward, so that from here on a signal sent to it waits for the
// command instead of taking its default action (as PID 1, the kernel would
// drop it). Call it before the caller's own signal handling lets go, then
// Run.
//
// A signal ignored when Catch is called is one the process inherited as
// ignored (nohup ignores SIGHUP; a non-interactive shell's "&" ignores
// SIGINT). Catching it to forward it would un-ignore it, and the command,
// which inherits it as ignored (execve(2) keeps ignored dispositions), would
// get the default action instead; so it stays ignored for both, as it does
// when the command is exec'd in place of the init.
func Catch(log Logger) *Init {
	in := &Init{log: log, sigs: make(chan os.Signal, 64)}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		// Orphans then go to the namespace's init instead; the command
		// itself is still our child and is still reaped.
		in.note(Event{Warning: true, Err: err, Msg: "cannot become a child subreaper; orphaned processes of the command will not be reaped by gpu-preflight"})
	}
	ignored, err := ignoredSignals()
	if err != nil {
		in.note(Event{Err: err, Msg: "cannot tell which signals are ignored; forwarding all"})
	}
	caught := append(forwardedSignals(ignored), unix.SIGCHLD)
	if ignored&(1<<(unix.SIGPIPE-1)) == 0 {
		// Caught, not forwarded (see notForwarded): uncaught, Go's runtime
		// ends the process when a write to stderr meets a closed pipe
		// (os/signal, "SIGPIPE"). Caught rather than ignored, because an
		// ignored SIGPIPE would stay ignored in the command (execve(2)).
		caught = append(caught, unix.SIGPIPE)
	}
	signal.Notify(in.sigs, caught...)
	return in
}

// Run starts cmd and does an init's duties until it exits:
//
//   - the child gets its own process group and, when stdin is our
//     terminal's foreground, the terminal; so a Ctrl-C from the terminal
//     reaches the command once, not once from the terminal and again from us;
//   - every signal caught is forwarded to the child's pid (tini's default),
//     or with cmd.SignalGroup to its process group (tini -g) while the
//     child still leads it;
//   - every child that exits is reaped (wait4(-1, WNOHANG) on SIGCHLD and
//     once a second, as tini's 1 s sigtimedwait loop does);
//   - when the command exits, Run returns how, without waiting for its
//     descendants (tini does the same; in a container the kernel then kills
//     the rest).
//
// An error means the command never started; errors.Is tells
// os.ErrNotExist (a shell's 127) from the rest (126). Signals are no
// longer caught when Run returns.
func (in *Init) Run(cmd Command) (Exit, error) {
	defer signal.Stop(in.sigs)
	in.group = cmd.SignalGroup
	pid, foreground, err := startChild(cmd)
	if err != nil {
		return Exit{}, err
	}
	if foreground {
		// We are now a background process on the terminal; writing our
		// last log lines to it must not stop us.
		signal.Ignore(unix.SIGTTIN, unix.SIGTTOU)
	}
	in.note(Event{PID: pid, Command: cmd.Argv[0], Msg: "supervising the command"})

	status := in.waitMain(pid)
	if foreground {
		// Take the terminal back, so a shell that started us finds it as
		// it left it.
		_ = unix.IoctlSetPointerInt(0, unix.TIOCSPGRP, unix.Getpgrp())
	}
	return exitOf(status), nil
}

// notForwarded are the signals an init keeps (tini's exceptions) or that
// are not signals a sender means for the command.
var notForwarded = map[syscall.Signal]string{
	unix.SIGKILL: "cannot be caught",
	unix.SIGSTOP: "cannot be caught",
	unix.SIGCHLD: "means a child changed state: reap",
	// Faults: tini leaves these to their default action on itself.
	unix.SIGFPE: "fault", unix.SIGILL: "fault", unix.SIGSEGV: "fault", unix.SIGBUS: "fault",
	unix.SIGABRT: "fault", unix.SIGTRAP: "fault", unix.SIGSYS: "fault",
	// The terminal stops a background process group that reads or writes
	// it; the command's group gets its own. tini ignores these.
	unix.SIGTTIN: "terminal job control", unix.SIGTTOU: "terminal job control",
	// The Go runtime sends itself SIGURG to preempt goroutines, so a
	// SIGURG seen here is mostly not from a sender at all.
	unix.SIGURG: "Go runtime preemption",
	// gpu-preflight's own write to a stderr whose reader has gone raises
	// it: forwarded, a log reader that went away would kill the command,
	// which gets a SIGPIPE of its own when it writes to that pipe itself.
	unix.SIGPIPE: "raised by our own writes to a closed stderr",
	// 32 and 33 are reserved by the C library (NPTL's cancellation and
	// setxid signals); user real-time signals start at SIGRTMIN, 34.
	syscall.Signal(32): "C library internal", syscall.Signal(33): "C library internal",
}

// sigrtmax is the highest signal number on Linux.
const sigrtmax = 64

// forwardedSignals lists every signal Run forwards, leaving out those in
// the ignored mask (bit N-1 for signal N): see Catch.
func forwardedSignals(ignored uint64) []os.Signal {
	var sigs []os.Signal
	for n := syscall.Signal(1); n <= sigrtmax; n++ {
		if _, keep := notForwarded[n]; !keep && ignored&(1<<(n-1)) == 0 {
			sigs = append(sigs, n)
		}
	}
	return sigs
}

// ignoredSignals reads the kernel's mask of signals this process ignores
// (the SigIgn line of /proc/self/status, proc(5)).
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

// reapInterval is how often Run reaps without a SIGCHLD: a SIGCHLD that
// arrives while the signal channel is full is dropped, and this bounds how
// long an exited child can go unnoticed.
const reapInterval = time.Second

// startChild forks and execs cmd.
func startChild(cmd Command) (pid int, foreground bool, err error) {
	// stdin, stdout and stderr as exec would leave them: a closed one, or
	// one of Go's own close-on-exec files that took its number because it
	// was closed, is closed in the child. Other inherited descriptors pass
	// through as under exec (Go opens its own with close-on-exec).
	files := make([]uintptr, 3)
	for fd := range files {
		files[fd] = uintptr(fd)
		if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC != 0 {
			files[fd] = ^uintptr(0) // -1: closed in the child
		}
	}
	attr := &syscall.ProcAttr{Env: cmd.Env, Files: files, Sys: &syscall.SysProcAttr{Setpgid: true}}
	if pgrp, err := unix.IoctlGetInt(0, unix.TIOCGPGRP); err == nil && pgrp == unix.Getpgrp() {
		// stdin is a terminal and our group is its foreground: hand it to
		// the command's group, as tini does with tcsetpgrp.
		attr.Sys.Foreground, attr.Sys.Ctty = true, 0
		foreground = true
	}
	pid, err = syscall.ForkExec(cmd.Path, cmd.Argv, attr)
	if err != nil {
		return 0, false, fmt.Errorf("%s: %w", cmd.Path, err)
	}
	return pid, foreground, nil
}

// waitMain forwards signals to pid and reaps every child until pid exits,
// and returns pid's wait status.
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

// forward sends s to the child, or to its process group: only while the
// child still leads the group it was started in, so a command that moved
// to a group of its own (setsid) is still signalled itself.
func (in *Init) forward(pid int, s syscall.Signal) {
	target := pid
	if pgid, err := unix.Getpgid(pid); in.group && err == nil && pgid == pid {
		target = -pid
	}
	// ESRCH: the child has just exited; the reap that follows sees it.
	if err := unix.Kill(target, s); err != nil && !errors.Is(err, unix.ESRCH) {
		in.note(Event{Warning: true, Err: err, Signal: s.String(), PID: target, Msg: "cannot forward signal"})
		return
	}
	in.note(Event{Signal: s.String(), PID: target, Msg: "signal forwarded"})
}

// reap collects every exited child without blocking. done is true when
// main was among them.
func (in *Init) reap(main int) (status unix.WaitStatus, done bool) {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if pid <= 0 || err != nil {
			// 0: children remain, none has exited; ECHILD: none remain.
			return status, done
		}
		if pid == main {
			status, done = ws, true
			continue // reap whatever else has exited too
		}
		in.note(Event{PID: pid, Msg: "reaped an orphaned process"})
	}
}

func (in *Init) note(e Event) {
	if in.log != nil {
		in.log.Log(e)
	}
}

// exitOf is the shell's reading of a wait status.
func exitOf(ws unix.WaitStatus) Exit {
	if ws.Signaled() {
		return Exit{Code: SignalBase + int(ws.Signal()), Signal: int(ws.Signal())}
	}
	return Exit{Code: ws.ExitStatus()}
}
