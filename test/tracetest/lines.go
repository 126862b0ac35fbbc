package tracetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/report/logs"
)

// timeField is the time zerolog's hook gives a line: the clock's, put
// back to the run's own by Stderr.
var timeField = regexp.MustCompile(`"time":"[^"]*"`)

// Stderr is what r's gpu-preflight writes on stderr, as the shim's own
// report/logs writes it: the summary, the provenance line, and, when the
// command was supervised and ran, the line that ends the run.
func Stderr(r Run) [][]byte {
	var b bytes.Buffer
	l, err := logs.New(&b, logs.FormatJSON, "info")
	if err != nil {
		panic(err)
	}
	start := Start(r)
	var lines [][]byte
	take := func(at time.Time) {
		for _, line := range bytes.Split(bytes.TrimSuffix(b.Bytes(), []byte("\n")), []byte("\n")) {
			if len(line) > 0 {
				lines = append(lines, timeField.ReplaceAll(bytes.Clone(line), []byte(`"time":"`+at.UTC().Format(report.TimeLayout)+`"`)))
			}
		}
		b.Reset()
	}
	logs.Summary(l, report.Summary{Record: start, Visible: r.GPUs})
	if r.NotStarted != "" {
		start = Record(r) // the command was not found: the first record says so
	}
	if err := logs.Record(l, start); err != nil {
		panic(err)
	}
	take(r.At)
	if r.Exit != nil && r.NotStarted == "" && len(r.Abort) == 0 {
		logs.Finished(l, Record(r))
		take(r.End())
	}
	return lines
}

// LegacyLine is the provenance line an older gpu-preflight wrote: the
// whole record under record, as long as the record.
func LegacyLine(r Run) []byte {
	rec, err := json.Marshal(Start(r))
	if err != nil {
		panic(err)
	}
	return fmt.Appendf(nil, `{"level":"info","recordBytes":%d,"record":%s,"time":%q,"message":"provenance"}`,
		len(rec), rec, r.At.UTC().Format(report.TimeLayout))
}

// Ledger is the runs' ledger (PREFLIGHT_LEDGER): a line per run at its
// start, and a second when a supervised command ends, in the order they
// were appended.
func Ledger(runs []Run) []byte {
	type line struct {
		at time.Time
		b  []byte
	}
	var ls []line
	for _, r := range runs {
		if r.Exit != nil && r.NotStarted == "" && len(r.Abort) == 0 {
			ls = append(ls, line{r.At, encode(Start(r))}, line{r.End(), encode(Record(r))})
			continue
		}
		ls = append(ls, line{r.At, encode(Record(r))})
	}
	slices.SortStableFunc(ls, func(a, b line) int { return a.at.Compare(b.at) })
	var b bytes.Buffer
	for _, l := range ls {
		b.Write(append(l.b, '\n'))
	}
	return b.Bytes()
}

func encode(r report.Record) []byte {
	b, err := r.AppendJSON(nil)
	if err != nil {
		panic(err)
	}
	return b
}
