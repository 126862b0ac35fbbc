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

// persist stores the record, and keeps it for a signal to complete. A
// failed write is a warning, never a reason to abort.
func (r *run) persist() {
	r.save(r.rec)
	if r.rec.Outcome == nil {
		rec := r.rec
		r.gate.written = &rec
	}
}

func (r *run) save(rec report.Record) {
	if r.cfg.ProvenanceDir != provenanceOff {
		if path, err := r.writeRecord(rec); err != nil {
			r.log.Warn().Err(logs.Err(err)).Str("dir", logs.Value(r.cfg.ProvenanceDir)).
				Msg("provenance record not written")
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

func (r *run) writeRecord(rec report.Record) (string, error) {
	dir, err := store.OpenDir(r.cfg.ProvenanceDir)
	if err != nil {
		return "", err
	}
	r.dir = dir
	return dir.Write(rec)
}

// writeTermination leaves the abort reason where Kubernetes reads it; a run
// on another host's files is no pod's and leaves this /dev alone.
func (r *run) writeTermination() {
	if !r.cfg.terminationLogSet && !fsroot.Root(r.cfg.HostRoot).IsHost() {
		return
	}
	msg := report.TerminationMessage(r.findings, r.rec.Decision)
	err := store.WriteTermination(r.cfg.TerminationLog, msg, r.cfg.terminationLogSet)
	if err == nil {
		return
	}
	// Outside Kubernetes it is missing; a link or a FIFO was put there.
	level := zerolog.DebugLevel
	if errors.Is(err, safefile.ErrLinked) || errors.Is(err, safefile.ErrNotRegular) {
		level = zerolog.WarnLevel
	}
	r.log.WithLevel(level).Err(logs.Err(err)).Str("path", logs.Value(r.cfg.TerminationLog)).Msg("termination message not written")
}

// complete records how the command ended, or notStarted, why it never ran.
func (r *run) complete(code, sig int, notStarted error) {
	r.rec = r.finishRecord(r.rec, code, sig, notStarted)
}

// finishRecord completes rec and stores it again: the file is replaced,
// the ledger and the log get a line that joins the first by runId.
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
			Msg("finished provenance record not written: the file keeps the start record, and the finished line above says how the run ended")
	}
}
