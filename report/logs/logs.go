// Package logs sets up the zerolog logger gpu-preflight writes its log
// lines with, and writes the lines that carry a run's findings, summary,
// abort reason and provenance record.
//
// zerolog writes every line itself. Nothing here decodes a line again:
// values are redacted and bounded where they are logged (Value, Cut), so
// that every JSON line stays under MaxLineBytes. The one check on written
// lines is their length (capWriter), a last resort for a caller that
// logged an unbounded value.
package logs

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/report/termsafe"
)

// MaxLineBytes bounds every JSON log line, newline included: container
// runtimes split longer ones (CRI-O/conmon at 8 KiB, containerd and Docker
// at 16 KiB; docs/sources.md, "Log pipelines"). The provenance line stays
// under provline.MaxLineBytes.
const MaxLineBytes = 8000

// Log formats.
const (
	FormatJSON    = "json"
	FormatConsole = "console"
	FormatAuto    = "auto"
)

// New returns the logger gpu-preflight writes to w (stderr: stdout
// belongs to the training program).
//
// format "json" writes one compact JSON object per line with the keys
// level, time (RFC 3339, UTC, nanoseconds) and message among the fields, in
// the order zerolog writes them, none longer than MaxLineBytes. "console" is zerolog's human format,
// coloured only when termsafe.UseColor(w), with every value escaped for the
// terminal. "auto" (or "") is console when w is a terminal, else json.
// level is a zerolog level name ("" is info).
func New(w io.Writer, format, level string) (zerolog.Logger, error) {
	lvl := zerolog.InfoLevel
	if level != "" {
		l, err := zerolog.ParseLevel(strings.ToLower(level))
		if err != nil || l == zerolog.NoLevel {
			return zerolog.Nop(), fmt.Errorf("log level %q: want one of trace, debug, info, warn, error, fatal, panic, disabled", level)
		}
		lvl = l
	}
	switch format {
	case FormatAuto, "":
		format = FormatJSON
		if termsafe.IsTerminal(w) {
			format = FormatConsole
		}
	case FormatJSON, FormatConsole:
	default:
		return zerolog.Nop(), fmt.Errorf("log format %q: want json, console or auto", format)
	}
	var out io.Writer = capWriter{w}
	if format == FormatConsole {
		out = zerolog.ConsoleWriter{Out: w, NoColor: !termsafe.UseColor(w), TimeFormat: "15:04:05.000", FormatPrepare: consoleFields}
	}
	return zerolog.New(out).Level(lvl).Hook(timeHook{}), nil
}

// consoleFields prepares a line for the console: it drops the fields a
// person need not read twice (the summary's and the abort line's, whose
// sentence says it all, and a finding's status, which the level says), and
// escapes every string for the terminal, nested ones too (termsafe.All):
// ConsoleWriter prints the message raw and nested objects as JSON.
func consoleFields(evt map[string]any) error {
	switch evt["event"] {
	case EventSummary, EventAbort:
		for k := range evt {
			switch k {
			case zerolog.TimestampFieldName, zerolog.LevelFieldName, zerolog.MessageFieldName:
			default:
				delete(evt, k)
			}
		}
	}
	if _, ok := evt["check"]; ok {
		delete(evt, "status")
	}
	for k, v := range evt {
		termsafe.All(&v)
		evt[k] = v
	}
	return nil
}

// timeHook adds the time in report.TimeLayout. zerolog's own Timestamp uses
// the package-global TimeFieldFormat (whole seconds by default); a hook
// keeps the format local to this logger.
type timeHook struct{}

func (timeHook) Run(e *zerolog.Event, _ zerolog.Level, _ string) {
	e.Str(zerolog.TimestampFieldName, time.Now().UTC().Format(report.TimeLayout))
}

// capWriter passes zerolog's JSON lines to w. A line over MaxLineBytes
// means a caller logged a value without bounding it; rather than let a runtime split it
// into fragments no pipeline can parse, capWriter writes in its place one
// line that says so and quotes the line's start. zerolog hands a writer
// one whole line per Write, and the level with it (WriteLevel).
type capWriter struct{ w io.Writer }

func (c capWriter) Write(p []byte) (int, error) {
	return c.WriteLevel(zerolog.NoLevel, p)
}

func (c capWriter) WriteLevel(level zerolog.Level, p []byte) (int, error) {
	line := termsafe.JSON(p) // zerolog leaves C1 and format characters raw
	if len(line) > MaxLineBytes {
		line = overCap(level, line)
	}
	if _, err := c.w.Write(line); err != nil {
		return 0, err
	}
	return len(p), nil
}

// overCap is the line written instead of p, which is over MaxLineBytes:
// the level p was logged at (error when unknown), a message that says what
// happened, and p's start.
func overCap(level zerolog.Level, p []byte) []byte {
	if level == zerolog.NoLevel {
		level = zerolog.ErrorLevel
	}
	var b bytes.Buffer
	l := zerolog.New(&b).Hook(timeHook{})
	l.WithLevel(level).Bool("truncated", true).Str("line", Cut(string(p), MaxLineBytes/2)).
		Msgf("gpu-preflight cut a log line of %d bytes, over the %d-byte cap: a value was logged without a bound (report this as a bug)", len(p), MaxLineBytes)
	return b.Bytes()
}
