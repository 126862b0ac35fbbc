package app

import (
	"errors"
	"time"

	"github.com/rs/zerolog"

	"github.com/gpu-preflight/gpu-preflight/internal/safefile"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/report/ledger"
	"github.com/gpu-preflight/gpu-preflight/report/logs"
	"github.com/gpu-preflight/gpu-preflight/report/store"
)

// persist stores the record and, while the command has not started, keeps
// it for a signal to complete (signalGate). A write that fails is a
// warning, never a reason to abort.
func (r *run) persist() {
	r.save(r.rec)
	if r.rec.Outcome == nil {
		rec := r.rec
		r.gate.written = &rec
	}
}

// save writes rec to the provenance directory and the ledger, and logs it
// as one line.
func (r *run) save(rec report.Record) {
	if r.cfg.ProvenanceDir != provenanceOff {
		if path, err := r.writeRecord(rec); err != nil {
			r.log.Warn().Err(logs.Err(err)).Str("dir", logs.Value(r.cfg.ProvenanceDir)).
				Msg("provenance record not written (set PREFLIGHT_PROVENANCE_DIR to a writable volume, or off)")
		} else {
			r.log.Debug().Str("path", logs.Value(path)).Msg("provenance record written")
		}
	}
	r.appendLedger(rec)
	if !r.cfg.LogProvenance {
		return
	}
	if err := logs.Record(r.log, rec); err != nil {
		r.log.Warn().Err(logs.Err(err)).Msg("provenance line not logged")
	}
}

func (r *run) appendLedger(rec report.Record) {
	if r.cfg.Ledger == "" {
		return
	}
	if err := ledger.Append(r.cfg.Ledger, rec); err != nil {
		r.log.Warn().Err(logs.Err(err)).Str("ledger", logs.Value(r.cfg.Ledger)).Msg("ledger line not appended")
	}
}

// writeRecord opens the provenance directory and writes rec there.
func (r *run) writeRecord(rec report.Record) (string, error) {
	dir, err := store.OpenDir(r.cfg.ProvenanceDir)
	if err != nil {
		return "", err
	}
	r.dir = dir
	return dir.Write(rec)
}

// writeTermination leaves the abort reason where Kubernetes reads it: a
// path set, or the default when the kubelet created it. A run pointed at
// another host's files is no pod's start and leaves this /dev alone.
func (r *run) writeTermination() {
	if !r.cfg.terminationLogSet && !fsroot.Root(r.cfg.HostRoot).IsHost() {
		return
	}
	msg := report.TerminationMessage(r.findings, r.rec.Decision)
	err := store.WriteTermination(r.cfg.TerminationLog, msg, r.cfg.terminationLogSet)
	if err == nil {
		return
	}
	// Outside Kubernetes the path is missing (debug); one that is not a
	// file of its own was put there by someone (a warning).
	level := zerolog.DebugLevel
	if errors.Is(err, safefile.ErrLinked) || errors.Is(err, safefile.ErrNotRegular) {
		level = zerolog.WarnLevel
	}
	r.log.WithLevel(level).Err(logs.Err(err)).Str("path", logs.Value(r.cfg.TerminationLog)).Msg("termination message not written")
}

// complete completes the run's record with how the command ended and stores
// it again; notStarted, when not nil, is why it never ran.
func (r *run) complete(code, sig int, notStarted error) {
	r.rec = r.finishRecord(r.rec, code, sig, notStarted)
}

// finishRecord completes rec and stores it where persist stored it: the
// record file is replaced, the ledger gets a second line for the run, and
// the log a line that joins the first by runId (logs.Finished). Failures
// are warnings: the exit code stands.
func (r *run) finishRecord(rec report.Record, code, sig int, notStarted error) report.Record {
	var err error
	if notStarted != nil {
		err = rec.NotStarted(code, sig, time.Now(), notStarted.Error())
	} else {
		err = rec.Finish(code, sig, time.Now())
	}
	if err != nil {
		r.log.Warn().Err(logs.Err(err)).Msg("provenance record not finished")
		return rec
	}
	logs.Finished(r.log, rec)
	if r.cfg.ProvenanceDir != provenanceOff {
		r.completeRecord(rec)
	}
	r.appendLedger(rec)
	return rec
}

// completeRecord replaces the run's record with rec in the directory the
// first went to, or writes it when the first write failed.
func (r *run) completeRecord(rec report.Record) {
	var err error
	if r.dir == nil {
		_, err = r.writeRecord(rec)
	} else {
		var foreign string
		foreign, err = r.dir.Complete(rec)
		if foreign != "" {
			r.log.Warn().Str("found", foreign).Str("dir", logs.Value(r.dir.Path())).
				Msg("the run's record file had been replaced while the command ran (by the command, or by anything that can write the provenance directory); it now holds the finished record again")
		}
	}
	if err != nil {
		r.log.Warn().Err(logs.Err(err)).Str("dir", logs.Value(r.cfg.ProvenanceDir)).
			Msg("finished provenance record not written (set PREFLIGHT_PROVENANCE_DIR to a writable volume, or off)")
	}
}
