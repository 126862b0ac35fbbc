package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
	"unsafe"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/cmd/gpu-preflight/internal/buildinfo"
	"github.com/gpu-preflight/gpu-preflight/internal/safefile"
	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/decision"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
	"github.com/gpu-preflight/gpu-preflight/preflight/gather"
	"github.com/gpu-preflight/gpu-preflight/preflight/policy"
	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/report/ledger"
	"github.com/gpu-preflight/gpu-preflight/report/logs"
	"github.com/gpu-preflight/gpu-preflight/report/stall"
	"github.com/gpu-preflight/gpu-preflight/report/store"
	"github.com/gpu-preflight/gpu-preflight/report/termsafe"
)

// outcome is what one preflight produced.
type outcome struct {
	cfg    Config
	log    zerolog.Logger
	out    *stall.Writer // under log: Flush before the process execs or exits
	record report.Record
	// findings are the checks' findings after PREFLIGHT_IGNORE; the
	// decision made on them is record.Decision.
	findings []check.Finding
	// gate still catches the terminating signals when preflight returns;
	// the caller releases it at the last moment before the command starts.
	gate *signalGate
	// path is the command's executable, found before the record is
	// written; startErr says why it cannot run (and startCode is 127 or
	// 126), in which case the record already says so.
	path      string
	startErr  error
	startCode int
	// notes are what the gathering had to say about the run (no manifest:
	// the image was scanned, a value cut at its limit); the log has them,
	// or for `check` without --json the report.
	notes []string
	// dir is the provenance directory, held open from the first record to
	// the finished one, so both go to the same directory whatever happens
	// to its path meanwhile; nil when it is off or could not be opened.
	dir *store.Dir
}

// logWriter is where a preflight's log lines go: w, except that the
// process's stdout or stderr is written with write(2) on its descriptor.
// Through os.File, a write to fd 1 or 2 that meets a pipe whose reader has
// gone (a log shipper that died, `gpu-preflight ... 2>&1 | head`) ends the
// process with SIGPIPE, unless it catches the signal (os/signal, "SIGPIPE"),
// which costs os/signal's threads; written directly, it fails with EPIPE,
// the kernel's SIGPIPE is dropped by Go's runtime, and the log line is lost,
// nothing else. The signal's disposition is left alone, so the command
// inherits it as gpu-preflight did.
func logWriter(w io.Writer) io.Writer {
	if f, ok := w.(*os.File); ok && (f == os.Stdout || f == os.Stderr) {
		return fdWriter(f.Fd())
	}
	return w
}

// fdWriter writes to a file descriptor with write(2).
type fdWriter uintptr

// Fd is the descriptor, for the terminal and pipe checks (termsafe, stall).
func (fd fdWriter) Fd() uintptr { return uintptr(fd) }

// Write writes all of p, as os.File does: again after a short write or an
// interrupted one, and after poll(2) when the descriptor was left
// non-blocking by whoever shares it.
func (fd fdWriter) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := unix.Write(int(fd), p[n:])
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
			if _, err := unix.Poll(pfd, -1); err != nil && err != unix.EINTR {
				return n, err
			}
			continue
		case err != nil:
			return n, err
		case m == 0:
			return n, io.ErrShortWrite
		}
		n += m
	}
	return n, nil
}

// terminatingSignals end gpu-preflight with 128+N while it checks; after
// exec they belong to the command.
var terminatingSignals = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT}

// preflight gathers, checks, decides, logs and records, then returns what
// then makes of the outcome: the exit code, or an exec that does not
// return. argv is the command that will run (nil for `check`). Bad
// configuration is a usage error (usageExit). The outcome's gate is not
// released: see outcome.gate. When the gathering hangs past the deadline,
// then runs on another goroutine, and the process exits with its code.
//
// For `check` (argv nil) stdout says what the run found, so the log says
// only what went wrong (warnings and errors: a record it could not write, a
// setting it ignores, a value cut at its limit): no summary, findings,
// record or abort line, which would say it all twice. asReport is check's
// human report, which also takes the gathering's notes (--json prints the
// record alone, and the notes stay in the log).
func preflight(overrides map[string]string, argv []string, env envvars.Env, asReport bool, stderr io.Writer, then func(outcome) int) int {
	started := time.Now()
	cfg, err := loadConfig(overrides)
	if err != nil {
		return usageExit(stderr, err)
	}
	reportOnStdout := argv == nil
	// Every log line goes through out, so a stderr nobody reads cannot
	// hold up the start of the command or the exit on a signal.
	out := stall.New(logWriter(stderr))
	log, err := logs.New(out, cfg.LogFormat, cfg.LogLevel)
	if err != nil {
		return usageExit(stderr, usagef("%v", err))
	}
	cfg.ProvenanceDir = cfg.provenanceDir()
	if reportOnStdout {
		cfg.LogProvenance = false // --json prints it
		// At the default level the info lines would all repeat the report;
		// a level asked for below it (debug: the probes' stderr) is kept.
		if log.GetLevel() == zerolog.InfoLevel {
			log = log.Level(zerolog.WarnLevel)
		}
	}
	out.Notice = droppedNotice(termsafe.IsTerminal(out), cfg)
	o := outcome{cfg: cfg, log: log, out: out}

	ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
	defer cancel()
	opts := cfg.gatherOptions(env)
	opts.Progress = new(gather.Progress)
	opts.Command = argv
	opts.ProbeStderr = func(probe, s string) { log.Debug().Str("stderr", logs.Value(s)).Msg(probe + " probe wrote on stderr") }

	// Signal handling costs threads of its own and a round trip with one of
	// them per signal (0.5-0.8 ms): catchSignals sets it up on another
	// goroutine while the gatherers run, and only when the run needs it.
	signalsCaught := cfg.catchesSignals(argv, os.Getpid())
	if signalsCaught {
		o.gate = catchSignals(cancel, log, out)
	} else {
		o.gate = defaultActionGate()
	}

	// conclude decides on what was found, and writes and logs the record.
	conclude := func(res result) outcome {
		findings := policy.Ignore(res.findings, cfg.ignore)
		o.findings = findings

		cwd, _ := os.Getwd()
		o.record = report.New(report.Inputs{
			Facts:       res.facts,
			Findings:    findings,
			Decision:    policy.Decide(cfg.policy, findings, policy.ExitCodes{Mismatch: cfg.ExitCode, NodeFault: cfg.NodeFaultExitCode}),
			Argv:        argv,
			ArgvRecord:  cfg.RecordArgv,
			Cwd:         cwd,
			UID:         os.Getuid(),
			GID:         os.Getgid(),
			Environ:     opts.Environ,
			ToolVersion: buildinfo.Version,
			ToolCommit:  buildinfo.Commit,
			Now:         started,
		})
		if argv != nil && o.record.Decision.Action == decision.Exec {
			// Find the command before the record is written, so a record never
			// says a command ran that cannot be found or run.
			if o.path, o.startErr = lookPath(argv[0], env); o.startErr != nil {
				o.startCode = startFailure(o.startErr)
				if err := o.record.NotStarted(o.startCode, 0, time.Now(), o.startErr.Error()); err != nil {
					o.log.Warn().Err(logs.Err(err)).Msg("provenance record does not say the command did not start")
				}
			}
		}
		// The log reads top down: the summary, what did not pass, the record,
		// and on abort, last (where docker logs, kubectl logs and a Slurm .out
		// end), the reason and the fix.
		if !reportOnStdout {
			logs.Summary(o.log, report.Summary{Record: o.record, Visible: len(res.visible), Elapsed: time.Since(started)})
		}
		warnings := cfg.warnings
		if asReport {
			o.notes = res.warnings
		} else {
			warnings = append(warnings, res.warnings...)
		}
		for _, w := range warnings {
			o.log.Warn().Msg(logs.Value(w))
		}
		if !reportOnStdout {
			logs.Findings(o.log, findings)
		}
		o.gate.locked(o.persist)
		if o.record.Decision.Action == decision.Abort {
			o.gate.locked(o.writeTermination)
			if !reportOnStdout {
				logs.Abort(o.log, o.record)
			}
		}
		return o
	}

	// A gatherer is stuck (a hung file system, a wedged driver with
	// PREFLIGHT_NVML_TIMEOUT above PREFLIGHT_TIMEOUT) or was cut short by
	// the deadline: the record keeps what was gathered before, and one
	// finding names what had not finished.
	cutShort := func() (result, bool) {
		pending, partial, late := opts.Progress.Late()
		if !late || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return result{}, false
		}
		return result{facts: partial.Facts, visible: partial.Visible,
			findings: []check.Finding{check.TimedOut(cfg.Timeout, pending)}}, true
	}
	gather := func() result {
		in, warnings := cfg.checkInput(ctx, opts)
		return result{in.Facts, in.Visible, check.Run(in), warnings}
	}
	finish := func(res result) int {
		cancel() // nothing waits on ctx once the gathering is over
		return then(conclude(res))
	}
	return gatherWithin(ctx, signalsCaught, gather, cutShort, finish, os.Exit)
}

// result is what the gathering and the checks found.
type result struct {
	facts    facts.Facts
	visible  []facts.GPU
	findings []check.Finding
	warnings []string
}

// persist writes the record to the provenance directory and the ledger, and
// logs it as one line. A write failure is a warning, never a reason to abort.
// Once the record is out, a signal that ends gpu-preflight before the
// command starts completes it with what happened instead (signalGate).
func (o *outcome) persist() {
	o.save(o.record)
	if o.record.Outcome == nil {
		rec := o.record
		o.gate.written = func(sig syscall.Signal) {
			code := exitSignalBase + int(sig)
			why := fmt.Sprintf("gpu-preflight received %s before it started the command, and exited with %d: the command never ran", unix.SignalName(sig), code)
			o.finishRecord(rec, code, int(sig), errors.New(why))
		}
	}
}

// save writes r as persist does.
func (o *outcome) save(r report.Record) {
	if o.cfg.ProvenanceDir != "off" {
		if path, err := o.writeRecord(r); err != nil {
			o.log.Warn().Err(logs.Err(err)).Str("dir", logs.Value(o.cfg.ProvenanceDir)).
				Msg("provenance record not written (set PREFLIGHT_PROVENANCE_DIR to a writable volume, or off)")
		} else {
			o.log.Debug().Str("path", logs.Value(path)).Msg("provenance record written")
		}
	}
	if o.cfg.Ledger != "" {
		if err := ledger.Append(o.cfg.Ledger, r); err != nil {
			o.log.Warn().Err(logs.Err(err)).Str("ledger", logs.Value(o.cfg.Ledger)).Msg("ledger line not appended")
		}
	}
	if !o.cfg.LogProvenance {
		return
	}
	if err := logs.Record(o.log, r); err != nil {
		o.log.Warn().Err(logs.Err(err)).Msg("provenance line not logged")
	}
}

// writeRecord opens the provenance directory and writes r there.
func (o *outcome) writeRecord(r report.Record) (string, error) {
	dir, err := store.OpenDir(o.cfg.ProvenanceDir)
	if err != nil {
		return "", err
	}
	o.dir = dir
	return dir.Write(r)
}

// writeTermination leaves the abort reason where Kubernetes reads it: a
// path set explicitly, or the default when the kubelet created it. A run
// pointed at another host's files (PREFLIGHT_HOST_ROOT) is no pod's start,
// so it leaves this machine's /dev alone unless told where to write.
func (o *outcome) writeTermination() {
	if !o.cfg.terminationLogSet && !fsroot.Root(o.cfg.HostRoot).IsHost() {
		return
	}
	msg := report.TerminationMessage(o.findings, o.record.Decision)
	err := store.WriteTermination(o.cfg.TerminationLog, msg, o.cfg.terminationLogSet)
	if err == nil {
		return
	}
	// Outside Kubernetes a missing or unwritable path is expected (debug);
	// a path that is something other than a file of its own (a hard link
	// to another file, a FIFO) was put there by someone, and is worth a
	// warning.
	level := zerolog.DebugLevel
	if errors.Is(err, safefile.ErrLinked) || errors.Is(err, safefile.ErrNotRegular) {
		level = zerolog.WarnLevel
	}
	o.log.WithLevel(level).Err(logs.Err(err)).Str("path", logs.Value(o.cfg.TerminationLog)).Msg("termination message not written")
}

// signalWriteGrace bounds how long a terminating signal waits, first for a
// record or termination message being written, then for the record to be
// completed with the signal. A write stalled longer (a hung volume) is
// abandoned: the exit must not wait on it.
const signalWriteGrace = 2 * time.Second

// signalGate ends the preflight on SIGTERM and friends with 128+N, keeps
// that exit from cutting a record write short, and leaves a record that
// says the command never ran when one was already written.
type signalGate struct {
	// catching is false for a gate from defaultSignals: the signals have
	// the kernel's default action, and the methods below do nothing.
	catching bool
	// writing is held (a token in it) while a record or termination
	// message is written. The signal handler takes it and never gives it
	// back, so a write either completes before the exit or never starts;
	// it waits for it at most signalWriteGrace.
	writing chan struct{}
	// armed is closed once the handler catches the signals.
	armed   chan struct{}
	ch      chan os.Signal
	stop    chan struct{}
	stopped chan struct{}
	cancel  context.CancelFunc
	log     zerolog.Logger
	out     *stall.Writer
	// written, set (while writing is held) once the record is out, stores
	// the record again, completed with the signal that ends the run.
	written func(syscall.Signal)
}

// catchSignals starts the signal handler. On a signal it kills the probe
// (through cancel) and exits with 128+N; a record already written is
// completed to say the command never ran.
//
// The handler's goroutine registers the signals itself, so that their
// set-up (os/signal starts two threads and makes a round trip with one of
// them per signal) runs beside the preflight instead of before it. Until it
// has, a signal gets the runtime's default action, as it does before
// catchSignals is called at all; locked (a record write) and release wait
// for the registration, so no record is written that a signal could leave
// untrue.
func catchSignals(cancel context.CancelFunc, log zerolog.Logger, out *stall.Writer) *signalGate {
	g := &signalGate{catching: true, writing: make(chan struct{}, 1), ch: make(chan os.Signal, len(terminatingSignals)),
		armed: make(chan struct{}), stop: make(chan struct{}), stopped: make(chan struct{}), cancel: cancel, log: log, out: out}
	go func() {
		defer close(g.stopped)
		for _, sig := range terminatingSignals {
			// A signal inherited as ignored (nohup's SIGHUP) stays ignored, as it
			// will for the command after exec.
			if !signal.Ignored(sig) {
				signal.Notify(g.ch, sig)
			}
		}
		close(g.armed)
		select {
		case sig := <-g.ch:
			g.exit(sig.(syscall.Signal))
		case <-g.stop:
		}
	}()
	return g
}

// defaultActionGate is the gate of a run that catches no signal
// (Config.catchesSignals): each terminating signal not inherited as ignored
// gets the kernel's default action now, the one it gets anyway once the
// command is exec'd, so from here to the exec a signal ends gpu-preflight
// in the kernel, as it would end the command (143 for SIGTERM to a shell,
// an orchestrator or a container engine), and none is lost. Until now Go's
// runtime held them: it ends the process the same way (its handler resets
// the default and raises the signal again).
func defaultActionGate() *signalGate {
	for _, sig := range terminatingSignals {
		if !signal.Ignored(sig) {
			setKernelDefault(sig.(syscall.Signal))
		}
	}
	return &signalGate{}
}

// exit ends the process for sig. It never returns.
func (g *signalGate) exit(sig syscall.Signal) {
	// The token is taken before the probe is cancelled: cancelling ends the
	// gathering, and the preflight would go on to write a record for a run
	// that is about to end. Holding the token first, no new write starts.
	code := exitSignalBase + int(sig)
	select {
	case g.writing <- struct{}{}:
		g.cancel()
		if g.written != nil {
			done := make(chan struct{})
			go func() { g.written(sig); close(done) }()
			select {
			case <-done:
			case <-time.After(signalWriteGrace):
				g.log.Warn().Dur("waited", signalWriteGrace).Msg("the record could not be completed with the signal in time: it still reads as if the command ran")
			}
		}
	case <-time.After(signalWriteGrace):
		g.cancel()
		g.log.Warn().Dur("waited", signalWriteGrace).Msg("a record write did not finish in time: exiting without it")
	}
	g.log.Warn().Str("signal", sig.String()).Int("exitCode", code).Msg("signal during preflight: exiting")
	g.out.Flush()
	os.Exit(code)
}

// locked runs f unless a signal is ending the process, in which case it
// blocks until the exit.
func (g *signalGate) locked(f func()) {
	if !g.catching {
		f()
		return
	}
	<-g.armed
	g.writing <- struct{}{}
	defer func() { <-g.writing }()
	f()
}

// release hands the signals back (to the default action, then to the
// command after exec, or to supervise, which catches them first). A signal
// that arrived before, even one the handler had not taken yet, still ends
// the process here: none is lost between the handler and the exec.
//
// What is left: a signal in the microseconds between the release and the
// execve(2) gets the default action, so gpu-preflight dies of it (exit
// status 128+N to a shell, as under any exec), and the record written
// before still reads as if the command ran.
func (g *signalGate) release() { g.handBack(false) }

// handBack is release; with kernelDefault (for an exec, see releaseForExec)
// the kernel's default action is set once the handler has stopped and
// before signal.Stop, so no signal reaches Go's runtime after it.
func (g *signalGate) handBack(kernelDefault bool) {
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
	// Until Stop returns, a signal still lands in ch; it is taken below.
	signal.Stop(g.ch)
	select {
	case sig := <-g.ch:
		g.exit(sig.(syscall.Signal))
	default:
	}
}

// releaseForExec is release for an exec: the kernel's default action is
// set for each terminating signal the gate catches before signal.Stop.
// Left to Go's runtime after signal.Stop, a signal is taken by a
// runtime thread that re-raises it with the default action, and an
// execve(2) on another thread in between destroys that thread and the
// signal with it: the command then started as if no signal had come (about
// 1 in 500 SIGTERMs of TestNoSignalIsLostDuringThePreflight). With the
// kernel's default in place, a signal from here on ends the process in the
// kernel, before or after the execve; one the handler already took is
// still drained by release. No Go API sets SIG_DFL in the kernel, hence the
// raw rt_sigaction(2); the process image is replaced right after.
func (g *signalGate) releaseForExec() { g.handBack(true) }

// setKernelDefault sets sig's disposition to SIG_DFL with rt_sigaction(2).
// A zeroed kernel sigaction is SIG_DFL with no flags and an empty mask, on
// every layout of the struct (with or without sa_restorer).
func setKernelDefault(sig syscall.Signal) {
	var act [4]uint64
	unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
}

// droppedNotice is the log line, in the log's format, that says how many
// lines a stalled stderr cost.
func droppedNotice(terminal bool, cfg Config) func(n, b int) []byte {
	format := cfg.LogFormat
	if format == logs.FormatAuto {
		format = logs.FormatJSON
		if terminal {
			format = logs.FormatConsole
		}
	}
	return func(n, b int) []byte {
		var buf bytes.Buffer
		l, err := logs.New(&buf, format, "info")
		if err != nil {
			return nil
		}
		l.Warn().Int("droppedLines", n).Int("droppedBytes", b).
			Msg("stderr was not being read: gpu-preflight dropped log lines rather than wait")
		return buf.Bytes()
	}
}

// gatherOptions says where and how to gather, from the configuration.
// env is this process's environment, parsed once by the command's entry
// point; the image's was read from PREFLIGHT_IMAGE_CONFIG, when that is
// set, as the configuration was checked.
func (c Config) gatherOptions(env envvars.Env) gather.Options {
	return gather.Options{
		Root:         fsroot.Root(c.Root),
		HostRoot:     fsroot.Root(c.HostRoot),
		ImageEnviron: c.imageEnv,
		Environ:      env,
		NVMLLibrary:  c.NVMLLibrary,
		ForceProbe:   c.nvmlLibrarySet,
		NVMLTimeout:  c.NVMLTimeout,
		CUDAMode:     c.CUDACheck,
		CUDATimeout:  c.CUDATimeout,
		Manifest:     c.Manifest,
	}
}

// checkInput gathers the facts and the visible GPUs and pairs them with the
// user's settings: what every check reads.
func (c Config) checkInput(ctx context.Context, opts gather.Options) (check.Input, []string) {
	g, warnings := gather.Gather(ctx, opts)
	return check.Input{Facts: g.Facts, Visible: g.Visible, Now: time.Now(), Options: check.Options{
		RequireGPU: bool(c.RequireGPU), MinGPUs: c.MinGPUs, ExtraRequire: c.Require}}, warnings
}

// checkMain is `gpu-preflight check` and the no-argument form.
func checkMain(overrides map[string]string, asJSON bool, env envvars.Env, stdout, stderr io.Writer) int {
	return preflight(overrides, nil, env, !asJSON, stderr, func(o outcome) int { return o.report(asJSON, stdout, stderr) })
}

// report is check's end: the record as JSON, or the human report.
func (o *outcome) report(asJSON bool, stdout, stderr io.Writer) int {
	o.gate.release()
	if asJSON {
		// Indented as the record's file is.
		b, err := store.Marshal(o.record)
		if err == nil {
			_, err = stdout.Write(b)
		}
		if err != nil {
			fmt.Fprintf(stderr, "gpu-preflight: writing the record: %v\n", err)
		}
	} else {
		report.Human(stdout, o.record)
		if len(o.notes) > 0 {
			fmt.Fprintln(stdout, "\nNotes:")
			for _, n := range o.notes {
				fmt.Fprintf(stdout, "  %s\n", termsafe.String(n))
			}
		}
	}
	return o.record.Decision.ExitCode
}

func cmdCheck(args, environ []string, stdout, stderr io.Writer) int {
	overrides := map[string]string{}
	fs := newFlagSet("check", stderr, overrides, args)
	asJSON := fs.Bool("json", false, "print the provenance record as JSON")
	if err := parseFlags(fs, args, stdout); err != nil {
		return usageExit(stderr, err)
	}
	if fs.NArg() > 0 {
		return usageExit(stderr, usagef("check takes no arguments (to run a command: gpu-preflight -- %s)", fs.Arg(0)))
	}
	return checkMain(overrides, *asJSON, envvars.Parse(environ), stdout, stderr)
}

// preflightAndExec is the ENTRYPOINT form: check, then replace this process
// with argv (or, in supervise mode, run it as a child).
func preflightAndExec(overrides map[string]string, argv []string, env envvars.Env, stdout, stderr io.Writer) int {
	return preflight(overrides, argv, env, false, stderr, func(o outcome) int { return o.start(argv, env) })
}

// start runs the command as the outcome decided: exec (or supervise) it,
// or return the exit code that stops the run.
func (o *outcome) start(argv []string, env envvars.Env) int {
	switch {
	case o.record.Decision.Action == decision.Abort:
		o.gate.release()
		return o.record.Decision.ExitCode
	case o.startErr != nil:
		o.gate.release()
		e := o.log.Error().Err(logs.Err(o.startErr)).Str("command", logs.Value(argv[0])).Int("exitCode", o.startCode)
		if hint := subcommandHint(argv[0], o.startCode); hint != "" {
			e = e.Str("remedy", hint)
		}
		e.Msg("cannot run the command")
		return o.startCode
	case o.cfg.supervise.supervises(os.Getpid()):
		return supervise(*o, argv, env.List())
	}
	return o.execCommand(argv, env.List())
}

// lookPath finds argv[0] the way a shell does, using the command's PATH:
// the first PATH= entry when there are two, as getenv(3) reads it.
func lookPath(name string, env envvars.Env) (string, error) {
	if filepath.Base(name) != name {
		return name, checkExecutable(name)
	}
	path, _ := env.Lookup("PATH")
	var firstErr error
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		err := checkExecutable(p)
		if err == nil {
			return p, nil
		}
		if firstErr == nil && !errors.Is(err, os.ErrNotExist) {
			firstErr = err
		}
	}
	if firstErr != nil {
		return "", firstErr
	}
	return "", fmt.Errorf("%s: command not found in PATH=%q: %w", name, path, os.ErrNotExist)
}

// checkExecutable reports os.ErrNotExist, os.ErrPermission (wrapped) or nil.
func checkExecutable(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	if st.IsDir() {
		return fmt.Errorf("%s is a directory: %w", p, os.ErrPermission)
	}
	if st.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not executable: %w", p, os.ErrPermission)
	}
	return nil
}

// execCommand replaces gpu-preflight with the command: same PID, argv,
// environment, working directory and file descriptors. It returns only on
// failure, 126 (the command cannot be run: a bad format, a noexec mount),
// after completing the record to say so.
func (o *outcome) execCommand(argv, environ []string) int {
	o.out.Flush()
	o.gate.releaseForExec()
	err := fmt.Errorf("%s: %w", o.path, syscall.Exec(o.path, argv, environ))
	code := startFailure(err)
	o.log.Error().Err(logs.Err(err)).Str("command", logs.Value(argv[0])).Int("exitCode", code).Msg("cannot run the command")
	o.finish(code, 0, err)
	return code
}

// subcommandHint explains a command not found that is gpu-preflight's own
// subcommand: in an image whose ENTRYPOINT is ["gpu-preflight", "--"],
// `docker run IMAGE check` asks for a program named check.
func subcommandHint(name string, code int) string {
	if _, ok := findSubcommand(name); !ok || code != exitNotFound {
		return ""
	}
	return fmt.Sprintf("%q is a gpu-preflight command, not a program in the image: the image's ENTRYPOINT ends with --, "+
		"so replace the entrypoint (docker run --entrypoint gpu-preflight IMAGE %s; in Kubernetes command: [gpu-preflight, %s])",
		name, name, name)
}
