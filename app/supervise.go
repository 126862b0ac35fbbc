package app

import (
	"github.com/rs/zerolog"

	"github.com/gpu-preflight/gpu-preflight/internal/initproc"
	"github.com/gpu-preflight/gpu-preflight/report/logs"
)

// supervise runs the command as a child, initproc doing an init's duties,
// completes the record with how it ended, and returns its exit code.
func (r *run) supervise() int {
	in := initproc.Catch(initLog{r.log}) // before the gate lets go: no signal is lost
	r.release()
	releaseKernelEnviron(environDrop)
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
