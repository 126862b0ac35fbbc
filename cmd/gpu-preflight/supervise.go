// The Go runtime's cgroup-aware GOMAXPROCS (Go 1.25) keeps the cgroup's
// CPU limit files open for the life of the process (runtime/cgroup_linux.go:
// one descriptor on cgroup v2, two on v1). In supervise mode those count
// against the descriptor limit the command is started under: with
// `ulimit -n 8`, fork/exec's own pipe no longer fits and the command cannot
// start (EMFILE). gpu-preflight is a short check and a waiting parent, with
// no use for a GOMAXPROCS below the CPUs it may run on, so it does without
// (as Go did before 1.25): the runtime then closes the files at start-up.
//go:debug containermaxprocs=0

package main

import (
	"errors"
	"os"
	"syscall"
	"time"

	"github.com/gpu-preflight/gpu-preflight/internal/initproc"
	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/report/ledger"
	"github.com/gpu-preflight/gpu-preflight/report/logs"
)

// supervise is PREFLIGHT_SUPERVISE=true, and the default (auto) when
// gpu-preflight is PID 1: it runs the command as a child instead of
// exec'ing it, with initproc doing an init's duties (forwarding signals,
// reaping), and returns the command's exit code (its status, or 128+N when
// signal N killed it).
//
// Before, it finishes the provenance record with the outcome and stores it
// again: the record file written at the start is replaced by the finished
// record of the same run (store.Dir.Complete: atomic, from memory, in the
// directory the first record went to), so the directory holds one record
// per run and `diff DIR` never compares a run with itself; the ledger gets
// a second line for the run, the one with the outcome; and the log a line
// that says how it ended (logs.Finished).
func supervise(o outcome, argv, environ []string) int {
	// Catch signals before the preflight's handler lets go of them and
	// before the child exists, so none sent in between is lost or takes its
	// default action on us: one that arrives before the release still ends
	// the preflight with 128+N, one after it waits for the child.
	in := initproc.Catch(o.log)
	o.gate.release()
	exit, err := in.Run(initproc.Command{Path: o.path, Argv: argv, Env: environ, SignalGroup: bool(o.cfg.SignalGroup)})
	if err != nil {
		code := startFailure(err)
		o.log.Error().Err(logs.Err(err)).Str("command", logs.Value(argv[0])).Int("exitCode", code).Msg("cannot run the command")
		o.finish(code, 0, err)
		return code
	}
	o.finish(exit.Code, exit.Signal, nil)
	o.out.Flush()
	return exit.Code
}

// startFailure maps a failure to start the command to its exit code, as a
// shell and execCommand do.
func startFailure(err error) int {
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOENT) {
		return exitNotFound
	}
	return exitNotExec
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
		o.completeRecord(r)
	}
	if o.cfg.Ledger != "" {
		if err := ledger.Append(o.cfg.Ledger, r); err != nil {
			o.log.Warn().Err(logs.Err(err)).Str("ledger", logs.Value(o.cfg.Ledger)).Msg("ledger line not appended")
		}
	}
	return r
}

// completeRecord replaces the run's record with the finished one r, in the
// directory the first went to, or writes it when the first write did not
// happen (the directory was not writable then, say).
func (o *outcome) completeRecord(r report.Record) {
	var err error
	if o.dir == nil {
		_, err = o.writeRecord(r)
	} else {
		var foreign string
		foreign, err = o.dir.Complete(r)
		if foreign != "" {
			o.log.Warn().Str("found", foreign).Str("dir", logs.Value(o.dir.Path())).
				Msg("the run's record file had been replaced while the command ran (by the command, or by anything that can write the provenance directory); it now holds the finished record again")
		}
	}
	if err != nil {
		o.log.Warn().Err(logs.Err(err)).Str("dir", logs.Value(o.cfg.ProvenanceDir)).
			Msg("finished provenance record not written (set PREFLIGHT_PROVENANCE_DIR to a writable volume, or off)")
	}
}
