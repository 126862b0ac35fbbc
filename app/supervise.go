package app

import (
	"github.com/rs/zerolog"

	"github.com/gpu-preflight/gpu-preflight/internal/initproc"
	"github.com/gpu-preflight/gpu-preflight/report/logs"
)

// supervise runs the command as a child, with initproc doing an init's
// duties (forwarding signals, reaping), and returns its exit code (128+N
// when signal N killed it). The record is then completed with the outcome
// and stored again (complete): the record file is replaced, so the
// directory holds one record per run; the ledger gets a second line.
func (r *run) supervise() int {
	// Caught before the gate lets go and before the child exists, so that
	// no signal in between is lost or takes its default action on us.
	in := initproc.Catch(initLog{r.log})
	r.release()
	exit, err := in.Run(initproc.Command{Path: r.path, Argv: r.argv, Env: r.env.List(), SignalGroup: bool(r.cfg.SignalGroup)})
	if err != nil {
		code := startFailure(err)
		r.logNotStarted(err, code, "")
		r.complete(code, 0, err)
		return code
	}
	r.complete(exit.Code, exit.Signal, nil)
	r.out.Flush()
	return exit.Code
}

// initLog logs initproc's events with their values made safe.
type initLog struct{ log zerolog.Logger }

func (l initLog) Log(e initproc.Event) {
	ev := l.log.Debug()
	if e.Warning {
		ev = l.log.Warn()
	}
	if e.Err != nil {
		ev = ev.Err(logs.Err(e.Err))
	}
	if e.Signal != "" {
		ev = ev.Str("signal", e.Signal)
	}
	if e.PID != 0 {
		ev = ev.Int("pid", e.PID)
	}
	if e.Command != "" {
		ev = ev.Str("command", logs.Value(e.Command))
	}
	ev.Msg(e.Msg)
}
