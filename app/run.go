// Package app is gpu-preflight's application: a run's stages (gather,
// decide, record, start) and each subcommand's work, given a Config.
package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/gpu-preflight/gpu-preflight/internal/buildinfo"
	"github.com/gpu-preflight/gpu-preflight/internal/stall"
	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/decision"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/gather"
	"github.com/gpu-preflight/gpu-preflight/preflight/policy"
	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/report/logs"
	"github.com/gpu-preflight/gpu-preflight/report/store"
	"github.com/gpu-preflight/gpu-preflight/report/termsafe"
)

// Exit codes (README "Exit codes").
const (
	ExitOK       = 0
	ExitUsage    = 64  // usage or configuration error
	ExitNotExec  = 126 // command found but not executable
	ExitNotFound = 127 // command not found
)

// Run is the ENTRYPOINT form: check, log, record, then exec or supervise
// argv. builtins are gpu-preflight's own commands, named when argv[0] is
// one. An error is a usage error.
func Run(cfg Config, env envvars.Env, argv, builtins []string, stderr io.Writer) (int, error) {
	r, err := newRun(cfg, env, argv, stderr)
	if err != nil {
		return ExitUsage, err
	}
	r.builtins = builtins
	return r.execute(), nil
}

// Check is `gpu-preflight check`: the same run, ending in the report (or
// the record) on stdout; its log says only what went wrong.
func Check(cfg Config, env envvars.Env, asJSON bool, stdout, stderr io.Writer) (int, error) {
	r, err := newRun(cfg, env, nil, stderr)
	if err != nil {
		return ExitUsage, err
	}
	r.stdout, r.asJSON = stdout, asJSON
	return r.execute(), nil
}

// A run is one preflight, of the ENTRYPOINT form or of check (argv nil).
type run struct {
	cfg      Config
	env      envvars.Env
	argv     []string
	builtins []string
	stdout   io.Writer // check's report
	asJSON   bool
	started  time.Time
	log      zerolog.Logger
	out      *stall.Writer // under log: flushed before the process execs or exits
	ctx      context.Context
	cancel   context.CancelFunc
	opts     gather.Options
	gate     signalGate
	// gatherFacts is gather.Gather, and exit os.Exit, but in tests.
	gatherFacts func(context.Context, gather.Options) (gather.Result, []string)
	exit        func(int)

	gathered  result
	findings  []check.Finding // after PREFLIGHT_IGNORE
	rec       report.Record
	path      string // the command's executable
	startErr  error  // why it cannot start, with startCode (127 or 126)
	startCode int
	dir       *store.Dir // the provenance directory, held from the first record to the finished one
}

// result is what the gathering and the checks found.
type result struct {
	facts    facts.Facts
	visible  []facts.GPU
	findings []check.Finding
	warnings []string
}

func newRun(cfg Config, env envvars.Env, argv []string, stderr io.Writer) (*run, error) {
	r := &run{cfg: cfg, env: env, argv: argv, started: time.Now(), gatherFacts: gather.Gather, exit: os.Exit}
	r.out = stall.New(logWriter(stderr)) // a stderr nobody reads holds nothing up
	var err error
	if r.log, err = logs.New(r.out, string(cfg.LogFormat), string(cfg.LogLevel)); err != nil {
		return nil, err
	}
	r.cfg.ProvenanceDir = cfg.provenanceDir(env)
	if r.isCheck() {
		r.cfg.LogProvenance = false // --json prints it
		if r.log.GetLevel() == zerolog.InfoLevel {
			r.log = r.log.Level(zerolog.WarnLevel) // the info lines would repeat the report
		}
	}
	r.out.Notice = droppedNotice(termsafe.IsTerminal(r.out), cfg.LogFormat)
	r.ctx, r.cancel = context.WithTimeout(context.Background(), time.Duration(cfg.Timeout))
	r.opts = cfg.gatherOptions(env)
	r.opts.Progress = new(gather.Progress)
	if argv != nil {
		r.opts.Command, r.opts.CommandFrom = argv, ""
	}
	r.opts.ProbeStderr = r.logProbeStderr
	if cfg.catchesSignals(argv, os.Getpid()) {
		r.catchSignals()
	} else {
		r.gate = defaultActionGate()
	}
	return r, nil
}

func (r *run) isCheck() bool { return r.argv == nil }

func (r *run) logProbeStderr(probe, s string) {
	r.log.Debug().Str("stderr", logs.Value(s)).Msg(probe + " probe wrote on stderr")
}

// execute is the run, one stage after another; a gathering that hangs past
// PREFLIGHT_TIMEOUT is left behind (deadline.go).
func (r *run) execute() int {
	res := r.gather()
	return r.finish(res)
}

func (r *run) finish(res result) int {
	r.cancel() // nothing waits on ctx once the gathering is over
	r.decide(res)
	r.record()
	return r.start()
}

// decide applies PREFLIGHT_IGNORE and the policy, makes the record, and
// looks the command up, so no record says a command ran that cannot.
func (r *run) decide(res result) {
	r.gathered = res
	r.findings = policy.Ignore(res.findings, r.cfg.ignore)
	r.rec = r.newRecord()
	if r.argv == nil || r.rec.Decision.Action != decision.Exec {
		return
	}
	if r.path, r.startErr = LookPath(r.argv[0], r.env); r.startErr != nil {
		r.startCode = startFailure(r.startErr)
		if err := r.rec.NotStarted(r.startCode, 0, time.Now(), r.startErr.Error()); err != nil {
			r.log.Warn().Err(logs.Err(err)).Msg("provenance record does not say the command did not start")
		}
	}
}

func (r *run) newRecord() report.Record {
	cwd, _ := os.Getwd()
	return report.New(report.Inputs{
		Facts:       r.gathered.facts,
		Findings:    r.findings,
		Decision:    policy.Decide(policy.Policy(r.cfg.Policy), r.findings, r.cfg.exitCodes()),
		Argv:        r.argv,
		ArgvRecord:  string(r.cfg.RecordArgv),
		Cwd:         cwd,
		UID:         os.Getuid(),
		GID:         os.Getgid(),
		Supervised:  !r.isCheck() && r.cfg.Supervises(os.Getpid()),
		Environ:     r.env,
		ToolVersion: buildinfo.Version,
		ToolCommit:  buildinfo.Commit,
		Now:         r.started,
	})
}

// record logs the summary, what did not pass and the record, stores it,
// and on abort ends the log with the reason, where a reader looks. check's
// report says the summary and the findings itself.
func (r *run) record() {
	if !r.isCheck() {
		logs.Summary(r.log, report.Summary{Record: r.rec, Visible: len(r.gathered.visible), Elapsed: time.Since(r.started)})
	}
	warnings := r.cfg.warnings
	if !r.isCheck() || r.asJSON {
		warnings = append(warnings, r.gathered.warnings...)
	}
	for _, w := range warnings {
		r.log.Warn().Msg(logs.Value(w))
	}
	if !r.isCheck() {
		logs.Findings(r.log, r.findings)
	}
	r.gate.hold()
	r.persist()
	r.gate.letGo()
	if r.rec.Decision.Action != decision.Abort {
		return
	}
	r.gate.hold()
	r.writeTermination()
	r.gate.letGo()
	if !r.isCheck() {
		logs.Abort(r.log, r.rec)
	}
}

// start ends the run: check's report, an abort, or the command.
func (r *run) start() int {
	switch {
	case r.isCheck():
		r.release()
		return r.report()
	case r.rec.Decision.Action == decision.Abort:
		r.release()
		return r.rec.Decision.ExitCode
	case r.startErr != nil:
		r.release()
		r.logNotStarted(r.startErr, r.startCode, r.builtinRemedy())
		return r.startCode
	case r.cfg.Supervises(os.Getpid()):
		return r.supervise()
	}
	return r.execCommand()
}

// report prints check's report: the record, or for a person with notes.
func (r *run) report() int {
	if r.asJSON {
		b, err := store.Marshal(r.rec)
		if err == nil {
			_, err = r.stdout.Write(termsafe.JSON(b))
		}
		if err != nil {
			fmt.Fprintf(r.out, "gpu-preflight: writing the record: %v\n", err)
		}
		return r.rec.Decision.ExitCode
	}
	report.Human(r.stdout, r.rec)
	if len(r.gathered.warnings) > 0 {
		fmt.Fprintln(r.stdout, "\nNotes:")
		for _, n := range r.gathered.warnings {
			fmt.Fprintf(r.stdout, "  %s\n", termsafe.String(n))
		}
	}
	return r.rec.Decision.ExitCode
}
