package examples

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/report/trace"
	"github.com/gpu-preflight/gpu-preflight/test/harness"
	"github.com/gpu-preflight/gpu-preflight/test/procdriver"
)

// fleetRun is one run of the shim in the small fleet below.
type fleetRun struct {
	job, node, driver, image string
	rank                     int
}

const (
	imageA = "registry.example/ml/resnet:2.4@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	imageB = "registry.example/ml/resnet:2.4@sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// fleetRuns: job llm-a's four ranks, rank 2 on a node already upgraded to
// driver 550; then job name resnet twice, on image A (runs) and, rebuilt,
// on image B, which needs a driver the node does not have (aborts, 78).
var fleetRuns = []fleetRun{
	{"llm-a", "node-0", "535.161.08", imageA, 0},
	{"llm-a", "node-1", "535.161.08", imageA, 1},
	{"llm-a", "node-2", "550.54.15", imageA, 2},
	{"llm-a", "node-3", "535.161.08", imageA, 3},
	{"resnet", "node-3", "535.161.08", imageA, 0},
	{"resnet", "node-3", "515.65.01", imageB, 0},
}

// shimFleet is what the shim itself wrote for fleetRuns: its stderr lines
// (JSON) per run, the ledger, and the records directory.
type shimFleet struct {
	lines         [][]string
	ledger, dir   string
	provenanceIdx []int // per run, the index of its provenance line
}

func runFleet(t *testing.T) shimFleet {
	t.Helper()
	tmp := t.TempDir()
	f := shimFleet{ledger: filepath.Join(tmp, "runs.jsonl"), dir: filepath.Join(tmp, "records")}
	for i, r := range fleetRuns {
		root := filepath.Join(tmp, fmt.Sprintf("root%d", i))
		if err := (procdriver.Driver{Version: r.driver}).Write(filepath.Join(root, "proc", "driver")); err != nil {
			t.Fatal(err)
		}
		env := []string{"PATH=/usr/bin:/bin", "NVIDIA_REQUIRE_CUDA=" + require118, "CUDA_VERSION=11.8.0",
			"PREFLIGHT_ROOT=" + root, "PREFLIGHT_HOST_ROOT=" + root, "PREFLIGHT_LOG_FORMAT=json",
			"PREFLIGHT_PROVENANCE_DIR=" + f.dir, "PREFLIGHT_LEDGER=" + f.ledger,
			"PREFLIGHT_NVML_LIBRARY=" + filepath.Join(tmp, "no-such-libnvidia-ml.so.1"),
			"KUBERNETES_SERVICE_HOST=10.96.0.1", "POD_NAMESPACE=ml", "NODE_NAME=" + r.node,
			fmt.Sprintf("POD_NAME=%s-%d", r.job, r.rank), "PREFLIGHT_JOB_ID=" + r.job,
			fmt.Sprintf("RANK=%d", r.rank), "WORLD_SIZE=4", "PREFLIGHT_IMAGE=" + r.image}
		res := harness.Run(t, time.Minute, tmp, env, shim(t), "--", "true")
		var lines []string
		idx := -1
		for _, l := range strings.Split(strings.TrimSpace(res.Stderr), "\n") {
			if strings.Contains(l, `"message":"provenance"`) {
				idx = len(lines)
			}
			lines = append(lines, l)
		}
		if idx < 0 {
			t.Fatalf("run %d wrote no provenance line (exit %d):\n%s", i, res.Code, res.Stderr)
		}
		f.lines = append(f.lines, lines)
		f.provenanceIdx = append(f.provenanceIdx, idx)
	}
	return f
}

// fluentBitRecord is a shim line as fluent-bit.conf's pipeline holds it:
// the CRI tail input's stream and logtag, the kubernetes filter's metadata,
// and the parser filter's fields lifted to the top (Reserve_Data On drops
// only Key_Name, log).
func fluentBitRecord(t *testing.T, line string, r fleetRun) map[string]any {
	t.Helper()
	var rec map[string]any
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatalf("a shim line is not JSON: %.200s", line)
	}
	rec["stream"], rec["logtag"] = "stderr", "F"
	rec["kubernetes"] = map[string]any{"pod_name": fmt.Sprintf("%s-%d", r.job, r.rank), "namespace_name": "ml",
		"host": r.node, "container_name": "train", "labels": map[string]any{"app": "train"}}
	return rec
}

// lokiLabels resolves an output's Labels as Fluent Bit's loki output does
// for the forms fluent-bit.conf uses: key=value, and key=$a['b']['c'] (a
// record accessor).
func lokiLabels(t *testing.T, spec string, rec map[string]any) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, kv := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			t.Fatalf("label %q is not key=value", kv)
		}
		if acc, ok := strings.CutPrefix(v, "$"); ok {
			var cur any = rec
			first, rest, _ := strings.Cut(acc, "[")
			path := []string{first}
			for _, p := range strings.Split(rest, "[") {
				if p = strings.Trim(p, "]'"); p != "" {
					path = append(path, p)
				}
			}
			for _, p := range path {
				m, _ := cur.(map[string]any)
				cur = m[p]
			}
			v, _ = cur.(string)
		}
		out[k] = v
	}
	return out
}

// exports are the fleet's provenance records as each log pipeline hands
// them out, built from the shim's own lines through fluent-bit.conf.
type exports map[string][]byte

func buildExports(t *testing.T, f shimFleet) exports {
	conf := loadFluentBit(t, "examples/logging/fluent-bit.conf")
	var provLabels, mainLabels string
	for _, o := range sectionsNamed(conf, "OUTPUT", "loki") {
		m, _ := o.Get("Match")
		l, _ := o.Get("Labels")
		if tagMatches(m, "gpu-preflight.provenance") {
			provLabels = l
		} else {
			mainLabels = l
		}
	}
	var esIndex string
	for _, o := range sectionsNamed(conf, "OUTPUT", "es") {
		esIndex, _ = o.Get("Index")
	}

	qs := traceQueries(t)
	lq, err := logQuery(logQueryTrees(t, qs)[0])
	if err != nil {
		t.Fatalf("%s: %v", qs[0], err)
	}
	search := traceSearch(t)

	ex := exports{}
	var loki, esLines, fbOut, fbPlain, zerolog bytes.Buffer
	var hits []map[string]any
	now := time.Now()
	for i, lines := range f.lines {
		r := fleetRuns[i]
		for j, line := range lines {
			zerolog.WriteString(line + "\n")
			rec := fluentBitRecord(t, line, r)
			prov := j == f.provenanceIdx[i]
			labels := mainLabels
			if prov {
				labels = provLabels
			}
			body, _ := json.Marshal(rec) // Line_Format json
			ts := now.Add(time.Duration(i*100+j) * time.Millisecond).UTC()
			if lq.Match(lokiLabels(t, labels, rec), string(body)) != prov {
				t.Errorf("%s: matches %v a line that is provenance=%v: %.120s", qs[0], !prov, prov, body)
			}
			if !prov {
				continue
			}
			// logcli --output=jsonl (pkg/logcli/output/jsonl.go): a map of
			// timestamp, line and labels, encoded by encoding/json.
			entry, _ := json.Marshal(map[string]any{"timestamp": ts, "line": string(body), "labels": lokiLabels(t, labels, rec)})
			loki.Write(append(entry, '\n'))

			// Fluent Bit's file output: out_file "TAG: [TIME, RECORD]", plain "RECORD".
			fmt.Fprintf(&fbOut, "gpu-preflight.provenance: [%d.%09d, %s]\n", ts.Unix(), ts.Nanosecond(), body)
			fbPlain.Write(append(body, '\n'))

			// The es output's document: the record and @timestamp (Time_Key).
			doc := map[string]any{"@timestamp": ts.Format(time.RFC3339Nano)}
			for k, v := range rec {
				doc[k] = v
			}
			id := fmt.Sprintf("doc-%d", i)
			dump, _ := json.Marshal(map[string]any{"_index": esIndex, "_type": "_doc", "_id": id, "_score": 1, "_source": doc})
			esLines.Write(append(dump, '\n'))
			if search.keeps(t, doc, now) {
				hits = append(hits, map[string]any{"_index": esIndex, "_id": id, "_score": nil,
					"_source": search.source(doc), "sort": []any{docField(doc, search.sortPath()...)}})
			}
		}
	}
	search.sortHits(t, hits)
	resp := map[string]any{"took": 3, "timed_out": false,
		"_shards": map[string]any{"total": 1, "successful": 1, "skipped": 0, "failed": 0},
		"hits":    map[string]any{"total": map[string]any{"value": len(hits), "relation": "eq"}, "max_score": nil, "hits": hits}}
	pretty, _ := json.MarshalIndent(resp, "", "  ")
	compact, _ := json.Marshal(resp)
	ex["loki.jsonl"] = loki.Bytes()
	ex["es-search-pretty.json"] = append(pretty, '\n')
	ex["es-search.json"] = append(compact, '\n')
	ex["elasticdump.jsonl"] = esLines.Bytes()
	ex["fluent-bit-out_file.log"] = fbOut.Bytes()
	ex["fluent-bit-plain.log"] = fbPlain.Bytes()
	ex["zerolog.log"] = zerolog.Bytes()
	return ex
}

// docField walks doc's JSON form along path (harness.Field).
func docField(doc map[string]any, path ...string) any {
	b, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	return harness.Field(v, path...)
}

// traceQueries reads trace.logql: one query per non-comment line.
func traceQueries(t *testing.T) []string {
	t.Helper()
	var qs []string
	for _, l := range strings.Split(readRepoFile(t, "examples/logging/trace.logql"), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			qs = append(qs, l)
		}
	}
	if len(qs) != 1 {
		t.Fatalf("trace.logql has %d queries, want 1", len(qs))
	}
	return qs
}

// searchBody is what trace-search.json asks of Elasticsearch, in the parts
// this test evaluates: size, one sort field, _source, and range filters.
type searchBody struct {
	Size   int                 `json:"size"`
	Sort   []map[string]string `json:"sort"`
	Source []string            `json:"_source"`
	Query  struct {
		Bool struct {
			Filter []map[string]map[string]map[string]string
		}
	} `json:"query"`
}

func traceSearch(t *testing.T) searchBody {
	t.Helper()
	var s searchBody
	dec := json.NewDecoder(strings.NewReader(readRepoFile(t, "examples/logging/trace-search.json")))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("trace-search.json: %v", err)
	}
	if len(s.Sort) != 1 || len(s.Sort[0]) != 1 {
		t.Fatalf("trace-search.json sorts by %v; want one field", s.Sort)
	}
	for k, dir := range s.Sort[0] {
		if k != "record.startedAt" || dir != "asc" {
			t.Errorf("sort %s %s: trace places runs in time order exactly when they come oldest first (record.startedAt asc)", k, dir)
		}
	}
	if s.Size < 1 || s.Size > 10000 {
		t.Errorf("size %d: Elasticsearch returns at most index.max_result_window (10000) hits", s.Size)
	}
	return s
}

func (s searchBody) sortPath() []string {
	for k := range s.Sort[0] {
		return strings.Split(k, ".")
	}
	return nil
}

// keeps evaluates the range filters on doc: "gte": "now-Nd" on an RFC 3339
// field.
func (s searchBody) keeps(t *testing.T, doc map[string]any, now time.Time) bool {
	t.Helper()
	if len(s.Query.Bool.Filter) == 0 {
		t.Fatal("trace-search.json has no filter: it would return every document of the index, oldest first, up to size")
	}
	for _, f := range s.Query.Bool.Filter {
		for kind, fields := range f {
			if kind != "range" {
				t.Fatalf("filter %s: this test evaluates range filters only", kind)
			}
			for path, cond := range fields {
				v, ok := docField(doc, strings.Split(path, ".")...).(string)
				at, err := time.Parse(time.RFC3339Nano, v)
				if !ok || err != nil {
					t.Fatalf("range on %s: the documents hold %v there, not a time", path, v)
				}
				for op, bound := range cond {
					ago, ok := strings.CutPrefix(bound, "now-")
					d, err := time.ParseDuration(strings.TrimSuffix(ago, "d") + "h")
					if op != "gte" || !ok || !strings.HasSuffix(ago, "d") || err != nil {
						t.Fatalf("range %s %s: this test evaluates gte now-Nd", op, bound)
					}
					if at.Before(now.Add(-24 * d)) {
						return false
					}
				}
			}
		}
	}
	return true
}

// source applies _source filtering: only the listed top-level fields.
func (s searchBody) source(doc map[string]any) map[string]any {
	if len(s.Source) == 0 {
		return doc
	}
	out := map[string]any{}
	for _, k := range s.Source {
		if v, ok := doc[k]; ok {
			out[k] = v
		}
	}
	return out
}

func (s searchBody) sortHits(t *testing.T, hits []map[string]any) {
	slices.SortStableFunc(hits, func(a, b map[string]any) int {
		return strings.Compare(a["sort"].([]any)[0].(string), b["sort"].([]any)[0].(string))
	})
	if len(hits) > s.Size {
		t.Fatalf("%d hits, over size %d", len(hits), s.Size)
	}
}

// traceJSON runs the real binary's trace --json over src.
func traceJSON(t *testing.T, args ...string) (trace.Result, int) {
	t.Helper()
	r := harness.Run(t, time.Minute, t.TempDir(), []string{"PATH=/usr/bin:/bin"}, shim(t), append([]string{"trace", "--json"}, args...)...)
	var res trace.Result
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
		t.Fatalf("trace %v: %v (exit %d)\nstdout: %.500s\nstderr: %s", args, err, r.Code, r.Stdout, r.Stderr)
	}
	return res, r.Code
}

// TestTraceReadsEveryExportOfTheShimsRecords runs the shim for a small
// fleet, exports its records as Loki (trace.logql through logcli),
// Elasticsearch (trace-search.json's response; elasticdump) and Fluent Bit's
// file output write them, and runs `gpu-preflight trace` on each: every
// source gives the ledger's answers.
func TestTraceReadsEveryExportOfTheShimsRecords(t *testing.T) {
	f := runFleet(t)
	ex := buildExports(t, f)
	want, code := traceJSON(t, f.ledger)
	if code != 1 || !want.DriftMatters {
		t.Fatalf("the ledger: exit %d, drift %v; rank 2's driver differs", code, want.DriftMatters)
	}
	checkFleetAnswers(t, want)

	fromDir, _ := traceJSON(t, f.dir)
	sameAnswers(t, "the records directory", want, fromDir)
	tmp := t.TempDir()
	for name, data := range ex {
		path := filepath.Join(tmp, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, code := traceJSON(t, path)
		if code != 1 || got.Totals.Records != int64(len(fleetRuns)) || got.Totals.Malformed != 0 {
			t.Errorf("%s: exit %d, totals %+v", name, code, got.Totals)
		}
		sameAnswers(t, name, want, got)
	}
}

func checkFleetAnswers(t *testing.T, res trace.Result) {
	t.Helper()
	if len(res.Jobs) != 1 || res.Jobs[0].JobID != "llm-a" {
		t.Fatalf("jobs %+v, want llm-a", res.Jobs)
	}
	drv := res.Jobs[0].Facts[0]
	if drv.Fact != "driver" || drv.Values[0].Value != "550.54.15" || !slices.Equal(drv.Values[0].Ranks, []string{"2"}) ||
		!slices.Equal(drv.Values[0].Nodes, []string{"node-2"}) {
		t.Errorf("driver drift %+v, want 550.54.15 on rank 2 of node-2 first", drv)
	}
	var job *trace.History
	for i, h := range res.Regressions {
		if h.Kind == trace.KindJob && h.Key == "resnet" {
			job = &res.Regressions[i]
		}
	}
	if job == nil || len(job.Boundaries) != 1 || !job.Failing {
		t.Fatalf("regressions %+v, want one boundary for job resnet", res.Regressions)
	}
	b := job.Boundaries[0]
	var fields []string
	for _, c := range b.Changes {
		if c.Matters {
			fields = append(fields, c.Field)
		}
	}
	for _, want := range []string{"driver", "image digest", "check cuda-requirement", "decision"} {
		if !slices.Contains(fields, want) {
			t.Errorf("the boundary's changes %v lack %q", fields, want)
		}
	}
	if !strings.HasPrefix(b.FirstBad.Outcome, "abort 78") || b.LastGood.Outcome != "exit 0" && b.LastGood.Outcome != "ran (not supervised)" {
		t.Errorf("boundary outcomes %q -> %q", b.LastGood.Outcome, b.FirstBad.Outcome)
	}
	for _, n := range res.Nodes {
		if n.Name == "node-3" && (n.MismatchAborts != 1 || n.MismatchFindings[0].ID != "cuda-requirement") {
			t.Errorf("node-3 %+v: want one mismatch abort on cuda-requirement", n)
		}
	}
}

// sameAnswers compares everything but the sources and the lines that held
// no record (the zerolog stream has the shim's other lines).
func sameAnswers(t *testing.T, name string, want, got trace.Result) {
	t.Helper()
	want.Sources, got.Sources = nil, nil
	want.Totals.Skipped, got.Totals.Skipped = 0, 0
	if !reflect.DeepEqual(want, got) {
		w, _ := json.MarshalIndent(want, "", " ")
		g, _ := json.MarshalIndent(got, "", " ")
		t.Errorf("%s gives other answers than the ledger:\nwant %s\ngot  %s", name, w, g)
	}
}

// TestREADMEQuotesTheTraceQuery: the README's logcli line and docs/trace.md
// run trace.logql's query, word for word.
func TestREADMEQuotesTheTraceQuery(t *testing.T) {
	q := traceQueries(t)[0]
	if !strings.Contains(readRepoFile(t, "README.md"), "'"+q+"' | gpu-preflight trace -") {
		t.Errorf("the README does not pipe trace.logql's query %s into gpu-preflight trace -", q)
	}
	if !strings.Contains(readRepoFile(t, "docs/trace.md"), "examples/logging/trace-search.json | gpu-preflight trace -") {
		t.Error("docs/trace.md does not pipe the search trace-search.json into gpu-preflight trace -")
	}
}
