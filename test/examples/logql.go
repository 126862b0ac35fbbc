package examples

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// LogQuery is the log pipeline of a LogQL query (Grafana Loki): the stream
// selector and the stages after it. For a metric query such as
// count_over_time({...} | ... [1h]) it is the inner log query.
type LogQuery struct {
	Selector []Matcher // {app="train"}
	Stages   []PipelineStage
}

// Matcher is one label matcher: name op "value" with op =, !=, =~ or !~.
type Matcher struct {
	Name, Op, Value string
}

// PipelineStage is one pipeline stage: a parser ("json", "logfmt"), a line filter
// (Op "|=", "!=", "|~", "!~" on the line) or a label filter (a Matcher on an
// extracted label).
type PipelineStage struct {
	Parser     string
	LineFilter *Matcher // Name is empty
	Label      *Matcher
}

// ParseLogQuery reads the subset of LogQL the examples use: a stream
// selector, then | json, | logfmt, label filters with string values, and
// line filters; anything else is an error, so a query the test cannot
// evaluate fails instead of passing unexamined. In a metric query the part
// from the selector to the range ("[1h]") is read.
func ParseLogQuery(q string) (LogQuery, error) {
	var lq LogQuery
	open := strings.IndexByte(q, '{')
	if open < 0 {
		return lq, fmt.Errorf("no stream selector {...} in %q", q)
	}
	rest := q[open+1:]
	closeAt := strings.IndexByte(rest, '}')
	if closeAt < 0 {
		return lq, fmt.Errorf("stream selector not closed in %q", q)
	}
	sel := strings.TrimSpace(rest[:closeAt])
	for sel != "" {
		m, after, err := parseMatcher(sel)
		if err != nil {
			return lq, fmt.Errorf("stream selector: %w", err)
		}
		lq.Selector = append(lq.Selector, m)
		sel = strings.TrimSpace(after)
		if sel == "" {
			break
		}
		if sel[0] != ',' {
			return lq, fmt.Errorf("stream selector: want , between matchers at %q", sel)
		}
		sel = strings.TrimSpace(sel[1:])
	}
	if len(lq.Selector) == 0 {
		return lq, fmt.Errorf("empty stream selector in %q", q)
	}
	p := strings.TrimSpace(rest[closeAt+1:])
	for p != "" && p[0] != '[' && p[0] != ')' {
		var st PipelineStage
		switch {
		case strings.HasPrefix(p, "|=") || strings.HasPrefix(p, "!=") || strings.HasPrefix(p, "|~") || strings.HasPrefix(p, "!~"):
			op := p[:2]
			v, after, err := quoted(strings.TrimSpace(p[2:]))
			if err != nil {
				return lq, fmt.Errorf("line filter %s: %w", op, err)
			}
			if op[1] == '~' {
				if _, err := regexp.Compile(v); err != nil {
					return lq, fmt.Errorf("line filter %s: %w", op, err)
				}
			}
			st.LineFilter = &Matcher{Op: op, Value: v}
			p = after
		case strings.HasPrefix(p, "|"):
			p = strings.TrimSpace(p[1:])
			word := p
			if i := strings.IndexAny(p, " |=!~[)"); i >= 0 {
				word = p[:i]
			}
			if word == "json" || word == "logfmt" {
				st.Parser = word
				p = p[len(word):]
				break
			}
			m, after, err := parseMatcher(p)
			if err != nil {
				return lq, fmt.Errorf("stage: %w", err)
			}
			st.Label = &m
			p = after
		default:
			return lq, fmt.Errorf("unexpected %q", p)
		}
		lq.Stages = append(lq.Stages, st)
		p = strings.TrimSpace(p)
	}
	return lq, nil
}

var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*`)

func parseMatcher(s string) (Matcher, string, error) {
	name := labelName.FindString(s)
	if name == "" {
		return Matcher{}, "", fmt.Errorf("want a label name at %q", s)
	}
	s = strings.TrimSpace(s[len(name):])
	var op string
	for _, o := range []string{"=~", "!~", "!=", "="} {
		if strings.HasPrefix(s, o) {
			op = o
			break
		}
	}
	if op == "" {
		return Matcher{}, "", fmt.Errorf("want =, !=, =~ or !~ after %s", name)
	}
	v, after, err := quoted(strings.TrimSpace(s[len(op):]))
	if err != nil {
		return Matcher{}, "", fmt.Errorf("%s%s: %w", name, op, err)
	}
	if op == "=~" || op == "!~" {
		if _, err := regexp.Compile(v); err != nil {
			return Matcher{}, "", fmt.Errorf("%s%s: %w", name, op, err)
		}
	}
	return Matcher{Name: name, Op: op, Value: v}, after, nil
}

// quoted reads a double-quoted Go-style string (LogQL's string syntax) or a
// backquoted raw string at the start of s.
func quoted(s string) (string, string, error) {
	if s == "" || (s[0] != '"' && s[0] != '`') {
		return "", "", fmt.Errorf("want a quoted string at %q", s)
	}
	q := s[0]
	for i := 1; i < len(s); i++ {
		if q == '"' && s[i] == '\\' {
			i++
			continue
		}
		if s[i] == q {
			v, err := strconv.Unquote(s[:i+1])
			if err != nil {
				return "", "", fmt.Errorf("string %s: %w", s[:i+1], err)
			}
			return v, s[i+1:], nil
		}
	}
	return "", "", fmt.Errorf("unterminated string at %q", s)
}

// Match reports whether a log line with the given stream labels passes the
// query, evaluating the stages as Loki does: json extracts the line's
// fields as labels (nested keys joined with _), a label filter compares an
// extracted or stream label (a missing one is ""), regular expressions match
// the whole value.
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
		case st.Parser == "logfmt":
			return false // not evaluated: no example uses it
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

// flatten adds obj's leaves to labels as Loki's json parser does: nested
// keys joined with "_", values as their JSON text (strings unquoted).
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
