package trace_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/report/trace"
	"github.com/gpu-preflight/gpu-preflight/test/tracetest"
)

// answers is what a Result says of a fleet: everything but where the
// records came from and what else the sources held.
func answers(res trace.Result) trace.Result {
	res.Sources = nil
	res.Totals = trace.Counts{Records: res.Totals.Records, Filtered: res.Totals.Filtered, Outcomes: res.Totals.Outcomes}
	return res
}

func sameAnswers(t *testing.T, name string, want, got trace.Result) {
	t.Helper()
	if w, g := answers(want), answers(got); !reflect.DeepEqual(w, g) {
		wb, _ := json.MarshalIndent(w, "", " ")
		gb, _ := json.MarshalIndent(g, "", " ")
		t.Errorf("%s gives other answers than the ledger:\nwant %s\ngot  %s", name, wb, gb)
	}
}

func stderrStream(es []tracetest.Entry) []byte {
	var b bytes.Buffer
	for _, e := range es {
		if e.Stream == "stderr" {
			b.Write(append(e.Line, '\n'))
		}
	}
	return b.Bytes()
}

// TestEveryFormGivesTheLedgersAnswers writes a small fleet of supervised
// runs as every log path without a writer here writes it (the shim's own
// log lines, one run's provenance line of 40 KiB from an older
// gpu-preflight, the job's output on stdout), and reads each: the answers
// are the ledger's. Splunk's TRUNCATE and journalctl -o json without --all
// cut the long line: that run is counted as truncated, and the rest are
// the ledger's answers without it.
func TestEveryFormGivesTheLedgersAnswers(t *testing.T) {
	runs := tracetest.SmallFleet()
	want := traceOf(t, trace.Options{}, tracetest.Ledger(runs))
	if want.Totals.Records != 26 || want.Totals.Outcomes != 22 || !want.DriftMatters || want.Drain[0] != "node-sick" {
		t.Fatalf("the ledger: %+v, drift %v, drain %v", want.Totals, want.DriftMatters, want.Drain)
	}
	without := append(append([]tracetest.Run{}, runs[:tracetest.LongRun]...), runs[tracetest.LongRun+1:]...)
	wantCut := traceOf(t, trace.Options{}, tracetest.Ledger(without))

	es := tracetest.Entries(runs, tracetest.LongRun)
	forms := append([]tracetest.Form{{Name: "stderr", Write: stderrStream}}, tracetest.Forms...)
	for _, f := range forms {
		t.Run(f.Name, func(t *testing.T) {
			got := traceOf(t, trace.Options{}, f.Write(es))
			c := got.Totals
			if c.Malformed != 0 || c.Stdout != 0 || c.Duplicates != 0 {
				t.Errorf("totals %+v", c)
			}
			switch f.Name {
			case "splunk-export", "journalctl-json":
				if c.Truncated != 1 || !strings.Contains(got.Sources[0].Problems[0].What, map[string]string{
					"splunk-export": "TRUNCATE", "journalctl-json": "--all"}[f.Name]) {
					t.Errorf("the long line: %+v, %v", c, got.Sources[0].Problems)
				}
				got.Totals.UnjoinedOutcomes = 0
				sameAnswers(t, f.Name, wantCut, got)
			default:
				sameAnswers(t, f.Name, want, got)
			}
		})
	}
}

// TestSupervisedRunsAreOneRunWithTheirOutcome: three supervised runs of
// a job exit 0, 0 and 1. Their ledger (a line at each start and end), their
// log (the provenance line, then the finished line) and their records
// directory (the finished records) say the same: 3 runs, 2 good, 1 failed,
// failing.
func TestSupervisedRunsAreOneRunWithTheirOutcome(t *testing.T) {
	var runs []tracetest.Run
	for i, code := range []int{0, 0, 1} {
		runs = append(runs, tracetest.Run{RunID: tracetest.RunID(100 + i), At: t0.Add(time.Duration(i) * time.Minute),
			Node: node(i), Job: "pretrain", Driver: oldDrv, DriverCUDA: "12.2", Digest: digestA,
			Ref: "registry.example/ml/pretrain:1", Exit: tracetest.Exit(code)})
	}
	var stderr, files bytes.Buffer
	for _, r := range runs {
		for _, l := range tracetest.Stderr(r) {
			stderr.Write(append(l, '\n'))
		}
		b, _ := json.MarshalIndent(tracetest.Record(r), "", "  ")
		files.Write(append(b, '\n'))
	}
	for name, src := range map[string][]byte{"ledger": tracetest.Ledger(runs), "log": stderr.Bytes(), "files": files.Bytes()} {
		res := traceOf(t, trace.Options{}, src)
		h := history(t, res, trace.KindJob, "pretrain")
		if res.Totals.Records != 3 || h.Runs != 3 || h.Good != 2 || h.Bad != 1 || !h.Failing {
			t.Errorf("%s: totals %+v, history %d runs, %d good, %d failed, failing %v; want 3, 2, 1, failing",
				name, res.Totals, h.Runs, h.Good, h.Bad, h.Failing)
		}
		if b := h.Boundaries; len(b) != 1 || b[0].FirstBad.Outcome != "exit 1" || b[0].LastGood.Outcome != "exit 0" {
			t.Errorf("%s: boundaries %+v", name, b)
		}
	}
}

func history(t *testing.T, res trace.Result, kind, key string) trace.History {
	t.Helper()
	for _, h := range res.Regressions {
		if h.Kind == kind && h.Key == key {
			return h
		}
	}
	t.Fatalf("no %s history %s in %+v", kind, key, res.Regressions)
	return trace.History{}
}

// TestARunDeliveredTwiceIsOneRun: the same log shipped twice, as two
// sources or one after the other in one, changes no answer.
func TestARunDeliveredTwiceIsOneRun(t *testing.T) {
	runs := tracetest.SmallFleet()
	log := stderrStream(tracetest.Entries(runs, -1))
	want := traceOf(t, trace.Options{}, log)
	twice := traceOf(t, trace.Options{}, log, log)
	sameAnswers(t, "the log twice", want, twice)
	if twice.Totals.Duplicates != 26+22 {
		t.Errorf("%d duplicates, want every record and end once more (48)", twice.Totals.Duplicates)
	}
	sameAnswers(t, "the log after itself", want, traceOf(t, trace.Options{}, append(append([]byte{}, log...), log...)))
	merged := trace.New(trace.Options{})
	merged.Read([]trace.Source{trace.Stream("a", bytes.NewReader(log)), trace.Stream("b", bytes.NewReader(log))})
	sameAnswers(t, "the log merged with itself", want, merged.Result())
}

// TestARunIDOnTwoHostsIsAConflict: a record with another run's id on
// another node is reported and counted once, never as a second run.
func TestARunIDOnTwoHostsIsAConflict(t *testing.T) {
	runs := digestChange()
	forged := runs[1]
	forged.Node = "gpu-node-99"
	var problems []trace.Problem
	tr := trace.New(trace.Options{Problem: func(p trace.Problem) { problems = append(problems, p) }})
	tr.Read([]trace.Source{trace.Stream("l", bytes.NewReader(ledger(t, append(runs, forged))))})
	res := tr.Result()
	sameAnswers(t, "the ledger with a forged record", traceOf(t, trace.Options{}, ledger(t, runs)), res)
	if res.Totals.Records != 5 || res.Totals.Conflicts != 1 || len(res.Nodes) != 2 {
		t.Errorf("totals %+v, %d nodes; want 5 runs, 1 conflict, 2 nodes", res.Totals, len(res.Nodes))
	}
	if len(problems) != 1 || problems[0].Kind != trace.ProblemConflict || !strings.Contains(problems[0].What, forged.RunID) {
		t.Errorf("problems %v", problems)
	}
}

// TestARecordTheJobPrintsOnStdoutIsNotBelieved: where the runtime's log
// says a line came on stdout, a record in it is the job's, not
// gpu-preflight's: counted as such and left out.
func TestARecordTheJobPrintsOnStdoutIsNotBelieved(t *testing.T) {
	runs := digestChange()
	good := tracetest.Stderr(runs[0])
	forged := runs[1]
	forged.Node, forged.Digest = "gpu-node-66", digestB
	var es []tracetest.Entry
	for _, l := range good {
		es = append(es, tracetest.Entry{Line: l, Stream: "stderr", Time: t0, Pod: "p", Container: "c", ID: strings.Repeat("1", 64)})
	}
	for _, l := range tracetest.Stderr(forged) {
		es = append(es, tracetest.Entry{Line: l, Stream: "stdout", Time: t0, Pod: "p", Container: "c", ID: strings.Repeat("1", 64)})
	}
	want := traceOf(t, trace.Options{}, tracetest.Ledger(runs[:1]))
	for _, f := range tracetest.Forms {
		switch f.Name {
		case "kubectl-timestamps", "kubectl-prefix", "journalctl-cat", "splunk-export", "datadog-archive", "cloudwatch-filter-log-events":
			continue // these forms do not say the stream
		}
		res := traceOf(t, trace.Options{}, f.Write(es))
		if res.Totals.Records != 1 || res.Totals.Stdout < 1 || len(res.Nodes) != 1 {
			t.Errorf("%s: totals %+v, nodes %d: the stdout record was believed", f.Name, res.Totals, len(res.Nodes))
		}
		sameAnswers(t, f.Name, want, res)
	}
}

// TestCheckIsNotAJobRun: gpu-preflight check in a failing job's pod does
// not make the job recovered.
func TestCheckIsNotAJobRun(t *testing.T) {
	runs := digestChange()
	check := runs[4]
	check.RunID, check.At, check.Check, check.Exit = tracetest.RunID(1999), check.At.Add(time.Hour), true, nil
	res := traceOf(t, trace.Options{}, ledger(t, append(runs, check)))
	h := history(t, res, trace.KindJob, "ml-resnet")
	sameAnswers(t, "the ledger with a check", traceOf(t, trace.Options{}, ledger(t, runs)), res)
	if res.Totals.Records != 5 || res.Totals.NotJobRuns != 1 || !h.Failing {
		t.Errorf("totals %+v, failing %v: check counted as a run", res.Totals, h.Failing)
	}
}

// TestAFutureRecordIsLeftOut: a record dated years ahead neither counts
// nor keeps a job failing.
func TestAFutureRecordIsLeftOut(t *testing.T) {
	runs := digestChange()
	future := runs[4]
	future.RunID, future.At = tracetest.RunID(1998), t0.Add(5*365*24*time.Hour)
	o := trace.Options{Now: t0.Add(10 * 24 * time.Hour)}
	res := traceOf(t, o, ledger(t, append(runs, future)))
	sameAnswers(t, "the ledger with a future record", traceOf(t, o, ledger(t, runs)), res)
	if res.Totals.Records != 5 || res.Totals.Future != 1 {
		t.Errorf("totals %+v", res.Totals)
	}
}

// TestValuesThatPrintAlikeAreOneValue: a GPU name with a zero-width space
// is the same GPU model: no drift; a value that holds one prints it.
func TestValuesThatPrintAlikeAreOneValue(t *testing.T) {
	runs := rollingUpgrade()[:16]
	runs[4].GPU = "NVIDIA H100\u200b 80GB HBM3"
	res := traceOf(t, trace.Options{}, ledger(t, runs))
	if len(res.Jobs) != 0 {
		t.Errorf("a zero-width space is drift: %+v", res.Jobs)
	}
	runs[4].GPU = "NVIDIA A100\u200b 80GB"
	res = traceOf(t, trace.Options{}, ledger(t, runs))
	if len(res.Jobs) != 1 || res.Jobs[0].Facts[0].Values[0].Value != `NVIDIA A100\u200b 80GB` {
		t.Errorf("jobs %+v: want the odd GPU printed with its format character visible", res.Jobs)
	}
}

// TestBrokenLinesCostThemselvesOnly: a torn first ledger line, a byte
// order mark, a hit nested too deep each lose that line or hit, no more.
func TestBrokenLinesCostThemselvesOnly(t *testing.T) {
	l := ledger(t, digestChange())
	for name, src := range map[string][]byte{
		"torn first line": append([]byte("{\n"), l...),
		"byte order mark": append([]byte("\ufeff"), l...),
		"BOM on a line":   bytes.Replace(l, []byte("\n{"), []byte("\n\ufeff{"), 1),
	} {
		if res := traceOf(t, trace.Options{}, src); res.Totals.Records != 5 {
			t.Errorf("%s: totals %+v", name, res.Totals)
		}
	}
	rec, _ := json.Marshal(tracetest.Record(digestChange()[0]))
	deep := strings.Repeat(`{"a":`, 200) + "1" + strings.Repeat("}", 200)
	doc := fmt.Sprintf("{\n  \"hits\": {\"hits\": [{\"_source\": %s}, {\"_source\": %s}]}\n}\n", deep, rec)
	if res := traceOf(t, trace.Options{}, []byte(doc)); res.Totals.Records != 1 {
		t.Errorf("a deep hit: totals %+v", res.Totals)
	}
}

// TestALostLastPartIsCountedAsTruncated: the long provenance line's CRI
// parts come, its F part never does (the file ends first): that run is
// counted as truncated, saying why, and the rest are the ledger's answers
// without it.
func TestALostLastPartIsCountedAsTruncated(t *testing.T) {
	runs := tracetest.SmallFleet()
	without := append(append([]tracetest.Run{}, runs[:tracetest.LongRun]...), runs[tracetest.LongRun+1:]...)
	want := traceOf(t, trace.Options{}, tracetest.Ledger(without))
	cri := tracetest.Forms[0]
	if cri.Name != "cri-containerd" {
		t.Fatalf("the first form is %s", cri.Name)
	}
	var whole, parts strings.Builder
	cutting := false
	for _, l := range strings.SplitAfter(string(cri.Write(tracetest.Entries(runs, tracetest.LongRun))), "\n") {
		switch {
		case strings.Contains(l, " stderr P "):
			parts.WriteString(l)
			cutting = true
		case cutting && strings.Contains(l, " stderr F "):
			cutting = false // the last part, lost
		default:
			whole.WriteString(l)
		}
	}
	if strings.Count(parts.String(), "\n") < 2 {
		t.Fatalf("the long line is not in parts:\n%.200s", parts.String())
	}
	var problems []trace.Problem
	tr := trace.New(trace.Options{Problem: func(p trace.Problem) { problems = append(problems, p) }})
	tr.Read([]trace.Source{trace.Stream("pods", strings.NewReader(whole.String()+parts.String()))})
	got := tr.Result()
	if got.Totals.Truncated != 1 || len(problems) != 1 || problems[0].Kind != trace.ProblemTruncated ||
		!strings.Contains(problems[0].What, "last part is missing") {
		t.Errorf("totals %+v, problems %v: want the long line truncated, its last part missing", got.Totals, problems)
	}
	sameAnswers(t, "the CRI file without the long line's last part", want, got)
}

// TestASupervisedRunWithoutItsEndIsAFailure: a supervised run's start is
// read, its end never is (the log was cut after it): the run counts as
// failed, "end not recorded"; a run not supervised has no end to wait for.
func TestASupervisedRunWithoutItsEndIsAFailure(t *testing.T) {
	runs := digestChange()[:3]
	var log bytes.Buffer
	for i, r := range runs {
		lines := tracetest.Stderr(r)
		if i == len(runs)-1 {
			lines = lines[:len(lines)-1] // the finished line
		}
		for _, l := range lines {
			log.Write(append(l, '\n'))
		}
	}
	h := history(t, traceOf(t, trace.Options{}, log.Bytes()), trace.KindJob, "ml-resnet")
	if h.Good != 2 || h.Bad != 1 || !h.Failing || len(h.Boundaries) != 1 || h.Boundaries[0].FirstBad.Outcome != "end not recorded" {
		t.Errorf("history %+v: want 2 good, the run without its end failed (end not recorded)", h)
	}
	unsupervised := runs[2]
	unsupervised.Exit = nil
	res := traceOf(t, trace.Options{}, ledger(t, append(runs[:2:2], unsupervised)))
	if res.Totals.Records != 3 || len(res.Regressions) != 0 {
		t.Errorf("totals %+v, regressions %+v: a run not supervised failed for want of an end", res.Totals, res.Regressions)
	}
}
