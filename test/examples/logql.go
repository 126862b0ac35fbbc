package examples

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// The LogQL queries of examples/logging are parsed by Grafana's own grammar,
// @grafana/lezer-logql, run by Node.js (logql/parse.mjs): Loki's module is
// AGPL from v3, its last Apache one predates `| json`, and Debian has none.
// The few stages the examples use are evaluated here from Loki's "Log
// queries" documentation; anything else is refused, never passed unexamined.

// logqlNode is one node of the grammar's syntax tree.
type logqlNode struct {
	Name     string      `json:"name"`
	Text     string      `json:"text"`
	Error    bool        `json:"error"`
	Children []logqlNode `json:"children"`
}

// find returns the nodes named name under n, n included, in query order,
// not looking inside one it returns.
func (n logqlNode) find(name string) []logqlNode {
	if n.Name == name {
		return []logqlNode{n}
	}
	var out []logqlNode
	for _, c := range n.Children {
		out = append(out, c.find(name)...)
	}
	return out
}

// child returns n's first child named one of names.
func (n logqlNode) child(names ...string) (logqlNode, bool) {
	for _, c := range n.Children {
		for _, name := range names {
			if c.Name == name {
				return c, true
			}
		}
	}
	return logqlNode{}, false
}

// firstError returns the text around the first node the parser inserted
// where the query is not LogQL (its parent's for an empty node).
func (n logqlNode) firstError() (string, bool) {
	for _, c := range n.Children {
		if c.Error {
			if c.Text != "" {
				return c.Text, true
			}
			return n.Text, true
		}
		if e, ok := c.firstError(); ok {
			return e, true
		}
	}
	return "", false
}

// grammarDir holds parse.mjs and the grammar scripts/logql-grammar.sh installs.
const grammarDir = "logql"

func parseLogQL(queries []string) ([]logqlNode, error) {
	if _, err := os.Stat(filepath.Join(grammarDir, "node_modules", "@grafana", "lezer-logql")); err != nil {
		return nil, fmt.Errorf("the LogQL grammar (Grafana's @grafana/lezer-logql) is not installed (%v): run 'make test-examples', or 'bash scripts/logql-grammar.sh'", err)
	}
	in, err := json.Marshal(queries)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("node", "parse.mjs")
	cmd.Dir = grammarDir
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("node logql/parse.mjs: %v\n%s", err, stderr.String())
	}
	var trees []logqlNode
	if err := json.Unmarshal(out, &trees); err != nil {
		return nil, fmt.Errorf("reading parse.mjs's trees: %w", err)
	}
	if len(trees) != len(queries) {
		return nil, fmt.Errorf("parse.mjs returned %d trees for %d queries", len(trees), len(queries))
	}
	return trees, nil
}

// LogQuery is the log pipeline of a LogQL query (of a metric query, the
// inner one): the stream selector and the stages after it.
type LogQuery struct {
	Selector []Matcher // {app="train"}
	Stages   []PipelineStage
}

// Matcher is one label matcher: name op "value" with op =, !=, =~ or !~.
type Matcher struct {
	Name, Op, Value string
}

// PipelineStage is one stage: the json parser, a line filter or a label filter.
type PipelineStage struct {
	Parser     string // "json"
	LineFilter *Matcher
	Label      *Matcher
}

func logQuery(tree logqlNode) (LogQuery, error) {
	var lq LogQuery
	if tree.Error {
		return lq, fmt.Errorf("not LogQL (Grafana's grammar)")
	}
	if near, ok := tree.firstError(); ok {
		return lq, fmt.Errorf("not LogQL at %q (Grafana's grammar)", near)
	}
	exprs := append(tree.find("LogExpr"), tree.find("LogRangeExpr")...)
	if len(exprs) != 1 {
		return lq, fmt.Errorf("want one log query, found %d", len(exprs))
	}
	expr := exprs[0]
	sel, ok := expr.child("Selector")
	if !ok {
		return lq, fmt.Errorf("no stream selector")
	}
	for _, m := range sel.find("Matcher") {
		mm, err := matcher(m)
		if err != nil {
			return lq, fmt.Errorf("stream selector: %w", err)
		}
		lq.Selector = append(lq.Selector, mm)
	}
	for _, st := range expr.find("PipelineStage") {
		switch {
		case hasChild(st, "LabelParser"):
			p, _ := st.child("LabelParser")
			if p.Text != "json" {
				return lq, fmt.Errorf("parser %q: only a plain json is evaluated here", p.Text)
			}
			lq.Stages = append(lq.Stages, PipelineStage{Parser: "json"})
		case hasChild(st, "LabelFilter"):
			f, _ := st.child("LabelFilter")
			m, ok := f.child("Matcher")
			if !ok {
				return lq, fmt.Errorf("label filter %q: only string matchers are evaluated here", f.Text)
			}
			mm, err := matcher(m)
			if err != nil {
				return lq, err
			}
			lq.Stages = append(lq.Stages, PipelineStage{Label: &mm})
		case hasChild(st, "LineFilters"):
			for _, lf := range st.find("LineFilter") {
				op, ok1 := lf.child("Filter")
				s, ok2 := lf.child("String")
				if !ok1 || !ok2 || len(lf.Children) != 2 {
					return lq, fmt.Errorf("line filter %q: only a plain |=, !=, |~ or !~ is evaluated here", lf.Text)
				}
				v, err := logqlString(s.Text, op.Text[1] == '~')
				if err != nil {
					return lq, fmt.Errorf("line filter %q: %w", lf.Text, err)
				}
				lq.Stages = append(lq.Stages, PipelineStage{LineFilter: &Matcher{Op: op.Text, Value: v}})
			}
		default:
			return lq, fmt.Errorf("stage %q is not evaluated here", st.Text)
		}
	}
	return lq, nil
}

func hasChild(n logqlNode, name string) bool {
	_, ok := n.child(name)
	return ok
}

// matcher reads a Matcher node: Identifier, operator, String.
func matcher(m logqlNode) (Matcher, error) {
	if len(m.Children) != 3 || m.Children[0].Name != "Identifier" || m.Children[2].Name != "String" {
		return Matcher{}, fmt.Errorf("matcher %q is not name op \"value\"", m.Text)
	}
	op := m.Children[1].Text
	v, err := logqlString(m.Children[2].Text, op == "=~" || op == "!~")
	if err != nil {
		return Matcher{}, fmt.Errorf("matcher %q: %w", m.Text, err)
	}
	return Matcher{Name: m.Children[0].Text, Op: op, Value: v}, nil
}

// logqlString is a LogQL string literal's value (Go's syntax); a regular
// expression must compile (Loki's are RE2).
func logqlString(lit string, regex bool) (string, error) {
	v, err := strconv.Unquote(lit)
	if err != nil {
		return "", fmt.Errorf("string %s: %w", lit, err)
	}
	if regex {
		if _, err := regexp.Compile(v); err != nil {
			return "", err
		}
	}
	return v, nil
}

// Match reports whether a line with the given stream labels passes the
// query, as Loki's documentation evaluates it: json extracts fields as
// labels (nested keys joined with _), a missing label is "", matchers'
// regular expressions match the whole value, line filters' any part.
func (lq LogQuery) Match(streamLabels map[string]string, line string) bool {
	labels := map[string]string{}
	for k, v := range streamLabels {
		labels[k] = v
	}
	for _, m := range lq.Selector {
		if !m.matches(labels[m.Name]) {
			return false
		}
	}
	for _, st := range lq.Stages {
		switch {
		case st.Parser == "json":
			var obj map[string]any
			if json.Unmarshal([]byte(line), &obj) != nil {
				labels["__error__"] = "JSONParserErr"
				continue
			}
			flatten("", obj, labels)
		case st.LineFilter != nil:
			f := st.LineFilter
			var ok bool
			switch f.Op {
			case "|=":
				ok = strings.Contains(line, f.Value)
			case "!=":
				ok = !strings.Contains(line, f.Value)
			case "|~":
				ok = regexp.MustCompile(f.Value).MatchString(line)
			case "!~":
				ok = !regexp.MustCompile(f.Value).MatchString(line)
			}
			if !ok {
				return false
			}
		case st.Label != nil:
			if !st.Label.matches(labels[st.Label.Name]) {
				return false
			}
		}
	}
	return true
}

func (m Matcher) matches(v string) bool {
	switch m.Op {
	case "=":
		return v == m.Value
	case "!=":
		return v != m.Value
	case "=~":
		return regexp.MustCompile("^(?:" + m.Value + ")$").MatchString(v)
	case "!~":
		return !regexp.MustCompile("^(?:" + m.Value + ")$").MatchString(v)
	}
	return false
}

// flatten adds obj's leaves to labels as Loki's json parser does.
func flatten(prefix string, obj map[string]any, labels map[string]string) {
	for k, v := range obj {
		name := k
		if prefix != "" {
			name = prefix + "_" + k
		}
		switch x := v.(type) {
		case map[string]any:
			flatten(name, x, labels)
		case string:
			labels[name] = x
		case nil:
			labels[name] = ""
		default:
			b, _ := json.Marshal(x)
			labels[name] = string(b)
		}
	}
}
