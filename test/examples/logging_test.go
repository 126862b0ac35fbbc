package examples

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func loadFluentBit(t *testing.T, rel string) []FluentBitSection {
	t.Helper()
	s, err := ParseFluentBit(readRepoFile(t, rel))
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return s
}

// sectionsNamed returns the sections of kind (FILTER, OUTPUT...) whose Name
// entry is name.
func sectionsNamed(secs []FluentBitSection, kind, name string) []FluentBitSection {
	var out []FluentBitSection
	for _, s := range secs {
		if n, _ := s.Get("Name"); s.Name == kind && strings.EqualFold(n, name) {
			out = append(out, s)
		}
	}
	return out
}

// tagMatches is Fluent Bit's Match: a tag pattern where * matches any run.
func tagMatches(pattern, tag string) bool {
	re := "^" + strings.ReplaceAll(regexp.QuoteMeta(pattern), `\*`, ".*") + "$"
	return regexp.MustCompile(re).MatchString(tag)
}

// TestFluentBitRoutesTheProvenanceLine runs gpu-preflight's real log lines
// through the configuration's own parser and rewrite_tag rule: exactly the
// provenance line must get the new tag, and an output must send that tag,
// and only that tag, to its own index.
func TestFluentBitRoutesTheProvenanceLine(t *testing.T) {
	conf := loadFluentBit(t, "examples/logging/fluent-bit.conf")
	parsers := loadFluentBit(t, "examples/logging/parsers.conf")

	if len(conf) == 0 || conf[0].Name != "SERVICE" {
		t.Errorf("the first section should be [SERVICE]")
	}
	if f, _ := conf[0].Get("Parsers_File"); f != "parsers.conf" {
		t.Errorf("Parsers_File %q, want parsers.conf (beside it)", f)
	}
	inputs := sectionsNamed(conf, "INPUT", "tail")
	if len(inputs) != 1 {
		t.Fatalf("want one tail input, got %d", len(inputs))
	}
	in := inputs[0]
	inTag, _ := in.Get("Tag")
	if ml, _ := in.Get("multiline.parser"); !strings.Contains(ml, "cri") {
		t.Errorf("the tail input does not join CRI partial lines (multiline.parser %q): the provenance line can be split", ml)
	}
	// A sample tag as tail makes it from a container log path.
	tag := strings.Replace(inTag, "*", "var.log.containers.train-x7k2p_ml_train-0123.log", 1)

	pf := sectionsNamed(conf, "FILTER", "parser")
	if len(pf) != 1 {
		t.Fatalf("want one parser filter, got %d", len(pf))
	}
	parserName, _ := pf[0].Get("Parser")
	key, _ := pf[0].Get("Key_Name")
	if keep, _ := pf[0].Get("Reserve_Data"); !strings.EqualFold(keep, "On") {
		t.Error("the parser filter drops the kubernetes metadata (Reserve_Data is not On)")
	}
	if key != "log" {
		t.Errorf("the parser filter reads %q; the cri and docker multiline parsers leave the line in log", key)
	}
	var parser *FluentBitSection
	for _, p := range parsers {
		if n, _ := p.Get("Name"); p.Name == "PARSER" && n == parserName {
			parser = &p
		}
	}
	if parser == nil {
		t.Fatalf("parser %q is not defined in parsers.conf", parserName)
	}
	if f, _ := parser.Get("Format"); f != "json" {
		t.Errorf("parser %s has Format %q, want json", parserName, f)
	}
	if _, ok := parser.Get("Time_Format"); ok {
		t.Error("the parser sets Time_Format: a line whose time does not parse would be dropped from the parse")
	}

	rt := sectionsNamed(conf, "FILTER", "rewrite_tag")
	if len(rt) != 1 {
		t.Fatalf("want one rewrite_tag filter, got %d", len(rt))
	}
	if m, _ := rt[0].Get("Match"); !tagMatches(m, tag) {
		t.Errorf("rewrite_tag Match %q does not match the input's tags (%s)", m, tag)
	}
	rules := rt[0].GetAll("Rule")
	if len(rules) != 1 {
		t.Fatalf("want one Rule, got %v", rules)
	}
	// Rule: KEY REGEX NEW_TAG KEEP (Fluent Bit, "Rewrite Tag").
	f := strings.Fields(rules[0])
	if len(f) != 4 || !strings.HasPrefix(f[0], "$") || (f[3] != "true" && f[3] != "false") {
		t.Fatalf("Rule %q is not KEY REGEX NEW_TAG KEEP", rules[0])
	}
	field, re, newTag := strings.TrimPrefix(f[0], "$"), regexp.MustCompile(f[1]), f[2]

	// The shim's own lines, through the parser (JSON) and the rule.
	var routed []map[string]any
	for _, line := range runAbort(t).lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("gpu-preflight wrote a line that is not JSON: %q", line)
		}
		if v, ok := rec[field].(string); ok && re.MatchString(v) {
			routed = append(routed, rec)
		}
	}
	if len(routed) != 1 || routed[0]["message"] != "provenance" || routed[0]["record"] == nil {
		t.Fatalf("the rule routes %d lines, want exactly the provenance line (with its record)", len(routed))
	}

	// The provenance tag goes to one Elasticsearch index and one Loki
	// stream of its own (trace.logql reads it); the main stream to Loki
	// only. No output takes both tags.
	var esOuts, lokiOuts []FluentBitSection
	for _, o := range conf {
		if o.Name != "OUTPUT" {
			continue
		}
		m, _ := o.Get("Match")
		name, _ := o.Get("Name")
		if tagMatches(m, newTag) {
			switch strings.ToLower(name) {
			case "es":
				esOuts = append(esOuts, o)
				if idx, _ := o.Get("Index"); idx == "" {
					t.Errorf("the es output for %s has no Index of its own", newTag)
				}
			case "loki":
				lokiOuts = append(lokiOuts, o)
			default:
				t.Errorf("output %s also takes %s", name, newTag)
			}
		}
		if tagMatches(m, tag) && tagMatches(m, newTag) {
			t.Errorf("output %s matches both the main stream and %s", name, newTag)
		}
	}
	if len(esOuts) != 1 || len(lokiOuts) != 1 {
		t.Errorf("%s goes to %d es and %d loki outputs, want one each", newTag, len(esOuts), len(lokiOuts))
	}
	var mainLoki []FluentBitSection
	for _, o := range sectionsNamed(conf, "OUTPUT", "loki") {
		if m, _ := o.Get("Match"); tagMatches(m, tag) {
			mainLoki = append(mainLoki, o)
		}
	}
	if len(mainLoki) != 1 {
		t.Fatal("no loki output of the container tags for aborted-runs.logql to query")
	}
	labels, _ := mainLoki[0].Get("Labels")
	if !strings.Contains(labels, "app=") {
		t.Errorf("the loki output sets labels %q; the queries select {app=...}", labels)
	}
}

// logQueries reads aborted-runs.logql: one query per non-comment line.
func logQueries(t *testing.T) []string {
	t.Helper()
	var qs []string
	for _, l := range strings.Split(readRepoFile(t, "examples/logging/aborted-runs.logql"), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			qs = append(qs, l)
		}
	}
	if len(qs) == 0 {
		t.Fatal("aborted-runs.logql has no query")
	}
	return qs
}

// logQueryTrees parses qs with Grafana's LogQL grammar (logql.go).
func logQueryTrees(t *testing.T, qs []string) []logqlNode {
	t.Helper()
	trees, err := parseLogQL(qs)
	if err != nil {
		t.Fatal(err)
	}
	return trees
}

// TestLogQLGrammarRejectsWhatIsNotLogQL: the grammar's trees mark text that
// is not LogQL, and logQuery refuses them, so the queries' check below can
// fail.
func TestLogQLGrammarRejectsWhatIsNotLogQL(t *testing.T) {
	bad := []string{`{app="train" | json`, `{app="train"} | json | event=abort`, `{app="train"} | jsn`}
	for i, tree := range logQueryTrees(t, bad) {
		_, err := logQuery(tree)
		if err == nil {
			t.Errorf("%s: read as a log query", bad[i])
		}
		t.Logf("%s: %v", bad[i], err)
	}
}

// TestLogQLFindsTheAbort evaluates each query's log pipeline over the lines
// of a real aborted run, as Loki would see them after fluent-bit.conf
// (stream label app=train): each must find at least one line, and none may
// match a line of a run that was not aborted. The queries are parsed by
// Grafana's LogQL grammar.
func TestLogQLFindsTheAbort(t *testing.T) {
	abort := runAbort(t)
	ok := runOK(t)
	stream := map[string]string{"app": "train"}
	qs := logQueries(t)
	for i, tree := range logQueryTrees(t, qs) {
		q := qs[i]
		lq, err := logQuery(tree)
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		if !slices.ContainsFunc(lq.Stages, func(s PipelineStage) bool { return s.Parser == "json" }) {
			t.Errorf("%s: no | json stage: the fields are in the JSON body", q)
		}
		n := 0
		for _, l := range abort.lines {
			if lq.Match(stream, l) {
				n++
			}
		}
		if n == 0 {
			t.Errorf("%s: matches none of an aborted run's lines", q)
		}
		for _, l := range ok {
			if lq.Match(stream, l) {
				t.Errorf("%s: matches a line of a run that was not aborted: %.200s", q, l)
			}
		}
	}
}
