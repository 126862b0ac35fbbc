package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/gpu-preflight/gpu-preflight/cmd/gpu-preflight/internal/buildinfo"
	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/container"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
	"github.com/gpu-preflight/gpu-preflight/preflight/gather"
	"github.com/gpu-preflight/gpu-preflight/preflight/policy"
	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/report/ledger"
)

// outcome is what one preflight produced.
type outcome struct {
	cfg      Config
	log      zerolog.Logger
	record   report.Record
	findings []check.Finding
	decision policy.Decision
}

// terminatingSignals end gpu-preflight with 128+N while it checks; after
// exec they belong to the command.
var terminatingSignals = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT}

// preflight gathers, checks, decides, logs and records. argv is the command
// that will run (nil for `check`). It returns a usageError for bad
// configuration.
func preflight(overrides map[string]string, argv, environ []string, stderr io.Writer) (outcome, error) {
	started := time.Now()
	cfg, err := loadConfig(overrides)
	if err != nil {
		return outcome{}, err
	}
	log, err := report.NewLogger(stderr, cfg.LogFormat, cfg.LogLevel)
	if err != nil {
		return outcome{}, usagef("%v", err)
	}
	o := outcome{cfg: cfg, log: log}

	ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
	defer cancel()
	type result struct {
		facts    facts.Facts
		visible  []facts.GPU
		findings []check.Finding
		warnings []string
	}
	done := make(chan result, 1)
	go func() {
		opts := cfg.gatherOptions(environ)
		opts.ProbeStderr = func(s string) { log.Info().Str("stderr", s).Msg("nvml probe wrote on stderr") }
		in, warnings := cfg.checkInput(ctx, opts)
		done <- result{in.Facts, in.Visible, check.Run(in), warnings}
	}()

	// Signal handling starts a thread of its own (a few hundred
	// microseconds); set it up while the gatherers already run.
	gate := exitOnSignal(cancel, log)
	defer gate.release()

	var res result
	select {
	case res = <-done:
	case <-ctx.Done():
		// A gatherer is stuck (a hung file system, say). The NVML probe has
		// its own, shorter deadline; this is the backstop for everything else.
		res.findings = []check.Finding{{ID: "preflight", Status: check.Error,
			Message: fmt.Sprintf("preflight did not finish within PREFLIGHT_TIMEOUT=%s", cfg.Timeout),
			Remedy:  "look for a hung mount under PREFLIGHT_ROOT or the driver, or raise PREFLIGHT_TIMEOUT"}}
	}
	for _, w := range res.warnings {
		log.Warn().Msg(w)
	}
	findings := policy.Ignore(res.findings, cfg.ignore)
	o.decision = policy.Decide(cfg.policy, findings, policy.ExitCodes{Mismatch: cfg.ExitCode, NodeFault: cfg.NodeFaultExitCode})
	o.findings = findings
	report.LogFindings(log, findings)

	cwd, _ := os.Getwd()
	o.record = report.New(report.Inputs{
		Facts:    res.facts,
		Findings: findings,
		Decision: report.Decision{Policy: string(o.decision.Policy), Action: o.decision.Action,
			ExitCode: o.decision.ExitCode, NodeFault: o.decision.NodeFault},
		Argv:        argv,
		Cwd:         cwd,
		UID:         os.Getuid(),
		GID:         os.Getgid(),
		Environ:     environ,
		ToolVersion: buildinfo.Version,
		ToolCommit:  buildinfo.Commit,
		Now:         started,
	})
	gate.locked(o.persist)
	o.log.Info().Str("action", o.decision.Action).Str("policy", string(o.decision.Policy)).
		Int("exitCode", o.decision.ExitCode).Float64("elapsedMs", float64(time.Since(started).Microseconds())/1000).
		Msg("decision")
	if o.decision.Action == policy.Abort {
		gate.locked(o.writeTermination)
	}
	return o, nil
}

// persist writes the record to the provenance directory and the ledger, and
// logs it as one line. A write failure is a warning, never a reason to abort.
func (o *outcome) persist() {
	if o.cfg.ProvenanceDir != "off" {
		if path, err := report.Write(o.cfg.ProvenanceDir, o.record); err != nil {
			o.log.Warn().Err(err).Str("dir", o.cfg.ProvenanceDir).
				Msg("provenance record not written (set PREFLIGHT_PROVENANCE_DIR to a writable volume, or off)")
		} else {
			o.log.Debug().Str("path", path).Msg("provenance record written")
		}
	}
	if o.cfg.Ledger != "" {
		if err := ledger.Append(o.cfg.Ledger, o.record); err != nil {
			o.log.Warn().Err(err).Str("ledger", o.cfg.Ledger).Msg("ledger line not appended")
		}
	}
	if err := report.LogRecord(o.log, o.record); err != nil {
		o.log.Warn().Err(err).Msg("provenance line not logged")
	}
}

// writeTermination leaves the abort reason where Kubernetes reads it.
func (o *outcome) writeTermination() {
	msg := report.TerminationMessage(o.findings, o.record.Decision)
	if err := report.WriteTermination(o.cfg.TerminationLog, msg); err != nil {
		o.log.Debug().Err(err).Str("path", o.cfg.TerminationLog).Msg("termination message not written")
	}
}

// signalGate ends the preflight on SIGTERM and friends with 128+N, and
// keeps that exit from cutting a record write short.
type signalGate struct {
	// mu is held while a record or termination message is written; the
	// signal handler takes it and never gives it back, so a write either
	// completes before the exit or never starts.
	mu   sync.Mutex
	ch   chan os.Signal
	stop chan struct{}
}

// exitOnSignal starts the signal handler. On a signal it kills the probe
// (through cancel) and exits at once with 128+N; the record is not written,
// since the command never ran.
func exitOnSignal(cancel context.CancelFunc, log zerolog.Logger) *signalGate {
	g := &signalGate{ch: make(chan os.Signal, 1), stop: make(chan struct{})}
	for _, sig := range terminatingSignals {
		// A signal inherited as ignored (nohup's SIGHUP) stays ignored, as it
		// will for the command after exec.
		if !signal.Ignored(sig) {
			signal.Notify(g.ch, sig)
		}
	}
	go func() {
		select {
		case sig := <-g.ch:
			g.mu.Lock()
			cancel()
			n := int(sig.(syscall.Signal))
			log.Warn().Str("signal", sig.String()).Int("exitCode", exitSignalBase+n).Msg("signal during preflight: exiting")
			os.Exit(exitSignalBase + n)
		case <-g.stop:
		}
	}()
	return g
}

// locked runs f unless a signal is ending the process, in which case it
// blocks until the exit.
func (g *signalGate) locked(f func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f()
}

// release hands the signals back (to the default action, then to the
// command after exec, or to supervise).
func (g *signalGate) release() {
	signal.Stop(g.ch)
	close(g.stop)
}

// gatherOptions says where and how to gather, from the configuration.
func (c Config) gatherOptions(environ []string) gather.Options {
	return gather.Options{
		Root:        fsroot.Root(c.Root),
		Environ:     environ,
		NVMLLibrary: c.NVMLLibrary,
		ForceProbe:  c.nvmlLibrarySet,
		NVMLTimeout: c.NVMLTimeout,
		CUDAMode:    c.CUDACheck,
		CUDATimeout: c.CUDATimeout,
		Manifest:    c.Manifest,
	}
}

// checkInput gathers the facts and the visible GPUs and pairs them with the
// user's settings: what every check reads. The warnings include the note
// on how the visible GPUs were chosen.
func (c Config) checkInput(ctx context.Context, opts gather.Options) (check.Input, []string) {
	f, warnings := gather.Gather(ctx, opts)
	visible, note := container.VisibleGPUs(f.Host.GPUs, f.Container.Env)
	if note != "" {
		warnings = append(warnings, note)
	}
	return check.Input{Facts: f, Visible: visible, Now: time.Now(), Options: check.Options{
		RequireGPU: c.RequireGPU, MinGPUs: c.MinGPUs, ExtraRequire: c.Require}}, warnings
}

// checkMain is `gpu-preflight check` and the no-argument form.
func checkMain(overrides map[string]string, asJSON bool, environ []string, stdout, stderr io.Writer) int {
	o, err := preflight(overrides, nil, environ, stderr)
	if err != nil {
		return usageExit(stderr, err)
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(o.record); err != nil {
			fmt.Fprintf(stderr, "gpu-preflight: writing the record: %v\n", err)
		}
	} else {
		report.Human(stdout, o.record)
	}
	return o.decision.ExitCode
}

func cmdCheck(args, environ []string, stdout, stderr io.Writer) int {
	overrides := map[string]string{}
	fs := newFlagSet("check", stderr, overrides)
	asJSON := fs.Bool("json", false, "print the provenance record as JSON")
	if err := fs.Parse(args); err != nil {
		return usageExit(stderr, err)
	}
	if fs.NArg() > 0 {
		return usageExit(stderr, usagef("check takes no arguments (to run a command: gpu-preflight -- %s)", fs.Arg(0)))
	}
	return checkMain(overrides, *asJSON, environ, stdout, stderr)
}

// preflightAndExec is the ENTRYPOINT form: check, then replace this process
// with argv (or, in supervise mode, run it as a child).
func preflightAndExec(overrides map[string]string, argv, environ []string, stdout, stderr io.Writer) int {
	o, err := preflight(overrides, argv, environ, stderr)
	if err != nil {
		return usageExit(stderr, err)
	}
	if o.decision.Action == policy.Abort {
		return o.decision.ExitCode
	}
	if o.cfg.Supervise {
		return supervise(o, argv, environ)
	}
	return execCommand(o.log, argv, environ)
}

// lookPath finds argv[0] the way a shell does, using PATH from environ.
func lookPath(name string, environ []string) (string, error) {
	if filepath.Base(name) != name {
		return name, checkExecutable(name)
	}
	path := ""
	for _, kv := range environ {
		if len(kv) > 5 && kv[:5] == "PATH=" {
			path = kv[5:]
		}
	}
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
// failure: 127 when the command is not found, 126 when it cannot be run.
func execCommand(log zerolog.Logger, argv, environ []string) int {
	path, err := lookPath(argv[0], environ)
	if err == nil {
		err = syscall.Exec(path, argv, environ)
		err = fmt.Errorf("%s: %w", path, err)
	}
	code := startFailure(err)
	log.Error().Err(err).Str("command", argv[0]).Int("exitCode", code).Msg("cannot run the command")
	return code
}
