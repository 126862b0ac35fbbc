package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/report/ledger"
	"github.com/gpu-preflight/gpu-preflight/report/logs"
	"github.com/gpu-preflight/gpu-preflight/report/store"
)

// notForwarded are the signals gpu-preflight keeps (tini's exceptions) or
// that are not signals a sender means for the command.
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
	// 32 and 33 are reserved by the C library (NPTL's cancellation and
	// setxid signals); user real-time signals start at SIGRTMIN, 34.
	syscall.Signal(32): "C library internal", syscall.Signal(33): "C library internal",
}

// sigrtmax is the highest signal number on Linux.
const sigrtmax = 64

// forwardedSignals lists every signal supervise forwards, leaving out those
// in the ignored mask (bit N-1 for signal N).
//
// A signal ignored when supervise starts is one gpu-preflight inherited as
// ignored (nohup ignores SIGHUP; a non-interactive shell's "&" ignores
// SIGINT); the Go runtime keeps such a SIGHUP or SIGINT ignored. Catching
// it to forward it would un-ignore it, and the command, which would have
// inherited it as ignored under exec, would get the default action instead.
// So it stays ignored for both, as in exec mode.
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

// reapInterval is how often supervise reaps without a SIGCHLD: a SIGCHLD
// that arrives while the signal channel is full is dropped, and this
// bounds how long an exited child can go unnoticed.
const reapInterval = time.Second

// supervise is PREFLIGHT_SUPERVISE=true, and the default (auto) when
// gpu-preflight is PID 1: it runs the command as a child
// instead of exec'ing it, does what tini does for it (krallin/tini
// src/tini.c, summarised in docs/sources.md, "PID 1 and signals"):
//
//   - the child gets its own process group and, when stdin is our
//     terminal's foreground, the terminal; so a Ctrl-C from the terminal
//     reaches the command once, not once from the terminal and again from us;
//   - every signal sent to gpu-preflight is forwarded to the child's pid
//     (tini's default; not to its group), except those in notForwarded and
//     those gpu-preflight inherited as ignored;
//   - gpu-preflight is a child subreaper (PR_SET_CHILD_SUBREAPER), so the
//     command's orphaned descendants are re-parented to it, and it reaps
//     every child that exits (wait4(-1, WNOHANG) on SIGCHLD and once a
//     second, as tini's 1 s sigtimedwait loop does);
//   - when the command exits, gpu-preflight exits with its status, or
//     128+N when signal N killed it, without waiting for its descendants
//     (tini does the same; in a container the kernel then kills the rest).
//
// supervise returns that exit code. Before, it finishes the provenance
// record with the outcome and stores it again: the record file written at
// the start is replaced by the finished record of the same run
// (store.Complete: atomic, refusing any other run's file), so the
// directory holds one record per run and `diff DIR` never compares a run
// with itself; the ledger gets a second line for the run, the one with the
// outcome; and the log a line that says how it ended (logs.Finished).
func supervise(o outcome, argv, environ []string) int {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		// Orphans then go to the namespace's init instead; the command
		// itself is still our child and is still reaped.
		o.log.Warn().Err(logs.Err(err)).Msg("cannot become a child subreaper; orphaned processes of the command will not be reaped by gpu-preflight")
	}

	// Catch signals before the preflight's handler lets go of them and
	// before the child exists, so none sent in between is lost or takes its
	// default action on us (as PID 1, the kernel would drop it): one that
	// arrives before the release still ends the preflight with 128+N, one
	// after it waits in sigs for the child.
	ignored, err := ignoredSignals()
	if err != nil {
		o.log.Debug().Err(logs.Err(err)).Msg("cannot tell which signals are ignored; forwarding all")
	}
	sigs := make(chan os.Signal, 64)
	signal.Notify(sigs, append(forwardedSignals(ignored), unix.SIGCHLD)...)
	defer signal.Stop(sigs)
	o.gate.release()

	pid, foreground, err := startChild(o.path, argv, environ)
	if err != nil {
		code := startFailure(err)
		o.log.Error().Err(logs.Err(err)).Str("command", logs.Value(argv[0])).Int("exitCode", code).Msg("cannot run the command")
		o.finish(code, 0, err)
		return code
	}
	if foreground {
		// We are now a background process on the terminal; writing our
		// last log lines to it must not stop us.
		signal.Ignore(unix.SIGTTIN, unix.SIGTTOU)
	}
	o.log.Debug().Int("pid", pid).Str("command", logs.Value(argv[0])).Msg("supervising the command")

	status := waitMain(pid, sigs, o.log)
	code, sig := exitCodeOf(status)
	if foreground {
		// Take the terminal back, so a shell that started us finds it as
		// it left it.
		_ = unix.IoctlSetPointerInt(0, unix.TIOCSPGRP, unix.Getpgrp())
	}
	o.finish(code, sig, nil)
	o.out.Flush()
	return code
}

// startChild forks and execs path with argv. An error is startFailure's to
// map to an exit code.
func startChild(path string, argv, environ []string) (pid int, foreground bool, err error) {
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
	attr := &syscall.ProcAttr{Env: environ, Files: files, Sys: &syscall.SysProcAttr{Setpgid: true}}
	if pgrp, err := unix.IoctlGetInt(0, unix.TIOCGPGRP); err == nil && pgrp == unix.Getpgrp() {
		// stdin is a terminal and our group is its foreground: hand it to
		// the command's group, as tini does with tcsetpgrp.
		attr.Sys.Foreground, attr.Sys.Ctty = true, 0
		foreground = true
	}
	pid, err = syscall.ForkExec(path, argv, attr)
	if err != nil {
		return 0, false, fmt.Errorf("%s: %w", path, err)
	}
	return pid, foreground, nil
}

// startFailure maps a failure to start the command to its exit code, as a
// shell and execCommand do.
func startFailure(err error) int {
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOENT) {
		return exitNotFound
	}
	return exitNotExec
}

// waitMain forwards signals to pid and reaps every child until pid exits,
// and returns pid's wait status.
func waitMain(pid int, sigs <-chan os.Signal, log zerolog.Logger) unix.WaitStatus {
	tick := time.NewTicker(reapInterval)
	defer tick.Stop()
	for {
		select {
		case s := <-sigs:
			if s != unix.SIGCHLD {
				forward(pid, s.(syscall.Signal), log)
			}
		case <-tick.C:
		}
		if status, done := reap(pid, log); done {
			return status
		}
	}
}

func forward(pid int, s syscall.Signal, log zerolog.Logger) {
	// ESRCH: the child has just exited; the reap that follows sees it.
	if err := unix.Kill(pid, s); err != nil && !errors.Is(err, unix.ESRCH) {
		log.Warn().Err(logs.Err(err)).Str("signal", s.String()).Int("pid", pid).Msg("cannot forward signal")
		return
	}
	log.Debug().Str("signal", s.String()).Int("pid", pid).Msg("signal forwarded")
}

// reap collects every exited child without blocking. done is true when
// main was among them.
func reap(main int, log zerolog.Logger) (status unix.WaitStatus, done bool) {
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
		log.Debug().Int("pid", pid).Msg("reaped an orphaned process")
	}
}

// exitCodeOf is the shell's exit code for a wait status: the exit status,
// or 128+N when killed by signal N; sig is N, or 0.
func exitCodeOf(ws unix.WaitStatus) (code, sig int) {
	if ws.Signaled() {
		return exitSignalBase + int(ws.Signal()), int(ws.Signal())
	}
	return ws.ExitStatus(), 0
}

// finish completes the run's record with how it ended and stores it again
// (finishRecord). notStarted, when not nil, is why the command never ran.
func (o *outcome) finish(code, sig int, notStarted error) {
	o.record = o.finishRecord(o.record, code, sig, notStarted)
}

// finishRecord completes r with how the run ended and stores it where
// persist stored the first one: the record file is replaced and the ledger
// gets a second line for the run; the log gets a small line that joins the
// first by runId (logs.Finished), not the record again.
// Failures are warnings: the exit code stays what it is whatever happens to
// the record.
func (o *outcome) finishRecord(r report.Record, code, sig int, notStarted error) report.Record {
	end := time.Now()
	var err error
	if notStarted != nil {
		err = r.NotStarted(code, sig, end, notStarted.Error())
	} else {
		err = r.Finish(code, sig, end)
	}
	if err != nil {
		o.log.Warn().Err(logs.Err(err)).Msg("provenance record not finished")
		return r
	}
	logs.Finished(o.log, r)
	if o.cfg.ProvenanceDir != "off" {
		if err := completeRecord(o.cfg.ProvenanceDir, r); err != nil {
			o.log.Warn().Err(logs.Err(err)).Str("dir", logs.Value(o.cfg.ProvenanceDir)).
				Msg("finished provenance record not written (set PREFLIGHT_PROVENANCE_DIR to a writable volume, or off)")
		}
	}
	if o.cfg.Ledger != "" {
		if err := ledger.Append(o.cfg.Ledger, r); err != nil {
			o.log.Warn().Err(logs.Err(err)).Str("ledger", logs.Value(o.cfg.Ledger)).Msg("ledger line not appended")
		}
	}
	return r
}

// completeRecord replaces the run's record in dir with the finished one, or
// writes it when the first write did not happen (the directory was not
// writable then, say).
func completeRecord(dir string, r report.Record) error {
	name, err := store.FileName(r)
	if err != nil {
		return err
	}
	err = store.Complete(filepath.Join(dir, name), r)
	if errors.Is(err, os.ErrNotExist) {
		_, err = store.Write(dir, r)
	}
	return err
}
