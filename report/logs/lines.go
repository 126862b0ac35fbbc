package logs

import (
	"fmt"

	"github.com/rs/zerolog"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/report/redact"
	"github.com/gpu-preflight/gpu-preflight/report/store"
	"github.com/gpu-preflight/gpu-preflight/report/termsafe"
	"github.com/gpu-preflight/gpu-preflight/report/trace/provline"
)

// Values of the "event" field that mark the lines a pipeline selects by:
// the summary every run writes first, and the abort line an aborted run
// writes last.
const (
	EventSummary = "summary"
	EventAbort   = "abort"
)

// ProvenanceMessage is the message of the log line that carries the record.
const ProvenanceMessage = "provenance"

// maxFieldBytes bounds one finding's message or remedy in a log line,
// escaped, so that a line with both stays under MaxLineBytes.
const maxFieldBytes = 3000

// maxFrameworks bounds the summary's "frameworks" field: an image holds a
// few; a scan that found more was fed a generated tree.
const maxFrameworks = 16

// Findings logs one line per finding: level by status (info at info, pass
// and skip at debug: a passing run stays quiet, and the record keeps every
// check), message the finding's message, fields check, status and remedy,
// and nodeFault when set. Text is redacted and long values are cut, with
// "truncated": true.
func Findings(l zerolog.Logger, findings []check.Finding) {
	for _, f := range findings {
		var e *zerolog.Event
		switch f.Status {
		case check.Error:
			e = l.Error()
		case check.Warn:
			e = l.Warn()
		case check.Info:
			e = l.Info()
		default:
			e = l.Debug()
		}
		if !e.Enabled() {
			continue
		}
		if f.NodeFault {
			e = e.Bool("nodeFault", true)
		}
		msg, remedy := redact.Value(f.Message), redact.Value(f.Remedy)
		cutMsg, cutRemedy := Cut(msg, maxFieldBytes), Cut(remedy, maxFieldBytes)
		e = e.Str("check", f.ID).Str("status", string(f.Status)).Str("remedy", cutRemedy)
		if cutMsg != msg || cutRemedy != remedy {
			e = e.Bool("truncated", true)
		}
		e.Msg(cutMsg)
	}
}

// Record logs the record as one line of at most provline.MaxLineBytes,
// so every log pipeline keeps it whole: message "provenance", the full
// record's size, the name of its file and the file's SHA-256, and under
// "record" the record reduced to what trace compares (provline).
func Record(l zerolog.Logger, r report.Record) error {
	e := l.Info()
	if !e.Enabled() {
		return nil // a level above info: skip the encoding on the start-up path
	}
	full, err := r.AppendJSON(make([]byte, 0, report.EncodedBytes))
	if err != nil {
		return fmt.Errorf("encode provenance record %s for the log: %w", r.RunID, err)
	}
	run, _ := provline.Project(full)
	e = e.Int("recordBytes", len(full))
	if name, err := store.FileName(r); err == nil && len(name) <= maxFileName {
		e = e.Str("recordFile", name)
	}
	sum := store.FileSHA256(full)
	e = e.Hex("recordSha256", sum[:])
	e.RawJSON("record", termsafe.JSON(run.AppendJSON(make([]byte, 0, provline.MaxRecordBytes)))).Msg(ProvenanceMessage)
	return nil
}

// maxFileName bounds the record file's name on the line (a run id is 32
// hex digits; a longer one set by hand is left out).
const maxFileName = 100

// Summary logs the summary line: message s.Line(), "event":"summary", and
// the decision and the facts behind the sentence as fields.
func Summary(l zerolog.Logger, s report.Summary) {
	r := s.Record
	fws := s.Frameworks()
	if len(fws) > maxFrameworks {
		fws = append(fws[:maxFrameworks:maxFrameworks], fmt.Sprintf("and %d more", len(fws)-maxFrameworks))
	}
	for i := range fws {
		fws[i] = Cut(fws[i], 200)
	}
	l.Info().Str("event", EventSummary).
		Int("gpus", s.Visible).
		Str("driver", r.Host.Driver.Version).
		Str("driverCuda", r.Host.Driver.CUDAVersion).
		Str("imageCuda", r.Image.CUDAVersion).
		Strs("frameworks", fws).
		Str("action", r.Decision.Action).
		Str("policy", r.Decision.Policy).
		Int("exitCode", r.Decision.ExitCode).
		Bool("nodeFault", r.Decision.NodeFault).
		Float64("elapsedMs", float64(s.Elapsed.Microseconds())/1000).
		Msg(Cut(s.Line(), maxFieldBytes))
}

// Abort logs report.AbortReason as the last line of an aborted run, at
// error, with "event":"abort", the exit code and the blocking check ids.
func Abort(l zerolog.Logger, r report.Record) {
	reason := report.AbortReason(r)
	if reason == "" {
		return
	}
	l.Error().Str("event", EventAbort).Int("exitCode", r.Decision.ExitCode).
		Bool("nodeFault", r.Decision.NodeFault).Strs("blocking", r.Decision.Blocking).Msg(Cut(reason, maxFieldBytes))
}

// EventFinished marks the line that ends a supervised run (provline.Finished).
const EventFinished = "finished"

// Finished logs how the run's command ended, as one small line that joins
// the run's provenance line by runId: "event":"finished", the exit code,
// the signal that killed it (0 when it exited), its duration, notStarted
// when it never ran, and the SHA-256 of the record file it now has.
func Finished(l zerolog.Logger, r report.Record) {
	if r.Outcome == nil {
		return
	}
	e := l.Info()
	msg := "command finished"
	if r.Outcome.NotStarted != "" {
		e = l.Warn().Str("notStarted", Cut(r.Outcome.NotStarted, maxFieldBytes))
		msg = "command did not start"
	}
	e = e.Str("event", EventFinished).Str("runId", r.RunID).Int("exitCode", r.Outcome.ExitCode).
		Int("signal", r.Outcome.Signal).Float64("durationSeconds", r.Outcome.DurationSeconds)
	if full, err := r.AppendJSON(make([]byte, 0, report.EncodedBytes)); err == nil {
		sum := store.FileSHA256(full)
		e = e.Hex("recordSha256", sum[:])
	}
	e.Msg(msg)
}
