package examples

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Dockerfile is a parsed Dockerfile: the global ARGs before the first FROM,
// then one Stage per FROM.
type Dockerfile struct {
	GlobalArgs []Instruction
	Stages     []Stage
}

// Stage is one FROM and the instructions up to the next.
type Stage struct {
	From  string // the image or stage reference, unexpanded
	Name  string // the AS name, lower-cased as Docker compares it; "" for none
	Index int
	Line  int
	Body  []Instruction
}

// Instruction is one logical line (continuations joined).
type Instruction struct {
	Cmd   string            // upper-cased: RUN, COPY, ENV...
	Flags map[string]string // leading --name=value flags (COPY --from, FROM --platform)
	Args  string            // the rest, after the flags, as written
	// Exec is the JSON array of the exec form (RUN, CMD, ENTRYPOINT), nil
	// for the shell form.
	Exec []string
	Line int // 1-based line of the instruction's first line
}

// ParseDockerfile reads the subset of the Dockerfile syntax the examples use:
// comments, line continuations with a backslash, instructions with leading
// --flags, the JSON exec form, and FROM ... AS name. It fails on a line that
// is not an instruction and on an instruction before the first FROM other
// than ARG.
func ParseDockerfile(src string) (Dockerfile, error) {
	var df Dockerfile
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		start := i + 1
		line := strings.TrimSpace(lines[i])
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		// Join continuations; comment lines inside a continuation are
		// dropped, as Docker does.
		for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
			line = strings.TrimSuffix(line, "\\")
			i++
			next := strings.TrimSpace(lines[i])
			if strings.HasPrefix(next, "#") {
				line += "\\"
				continue
			}
			line += " " + next
		}
		line = strings.TrimSuffix(line, "\\")
		in, err := parseInstruction(line, start)
		if err != nil {
			return df, err
		}
		if in.Cmd == "FROM" {
			st, err := parseFrom(in)
			if err != nil {
				return df, err
			}
			st.Index = len(df.Stages)
			df.Stages = append(df.Stages, st)
			continue
		}
		if len(df.Stages) == 0 {
			if in.Cmd != "ARG" {
				return df, fmt.Errorf("line %d: %s before the first FROM (only ARG may come first)", start, in.Cmd)
			}
			df.GlobalArgs = append(df.GlobalArgs, in)
			continue
		}
		last := &df.Stages[len(df.Stages)-1]
		last.Body = append(last.Body, in)
	}
	if len(df.Stages) == 0 {
		return df, fmt.Errorf("no FROM instruction")
	}
	return df, nil
}

var knownInstructions = map[string]bool{
	"FROM": true, "RUN": true, "CMD": true, "LABEL": true, "EXPOSE": true, "ENV": true, "ADD": true,
	"COPY": true, "ENTRYPOINT": true, "VOLUME": true, "USER": true, "WORKDIR": true, "ARG": true,
	"ONBUILD": true, "STOPSIGNAL": true, "HEALTHCHECK": true, "SHELL": true, "MAINTAINER": true,
}

func parseInstruction(line string, lineNo int) (Instruction, error) {
	word, rest, _ := strings.Cut(line, " ")
	in := Instruction{Cmd: strings.ToUpper(word), Flags: map[string]string{}, Line: lineNo}
	if !knownInstructions[in.Cmd] {
		return in, fmt.Errorf("line %d: %q is not a Dockerfile instruction", lineNo, word)
	}
	rest = strings.TrimSpace(rest)
	for strings.HasPrefix(rest, "--") {
		flag, after, _ := strings.Cut(rest, " ")
		name, value, _ := strings.Cut(strings.TrimPrefix(flag, "--"), "=")
		in.Flags[name] = value
		rest = strings.TrimSpace(after)
	}
	in.Args = rest
	if strings.HasPrefix(rest, "[") {
		var exec []string
		if err := json.Unmarshal([]byte(rest), &exec); err == nil {
			in.Exec = exec
		} else if in.Cmd == "RUN" || in.Cmd == "CMD" || in.Cmd == "ENTRYPOINT" {
			return in, fmt.Errorf("line %d: %s starts with [ but is not a JSON array of strings: %v", lineNo, in.Cmd, err)
		}
	}
	return in, nil
}

func parseFrom(in Instruction) (Stage, error) {
	f := strings.Fields(in.Args)
	st := Stage{Line: in.Line}
	switch {
	case len(f) == 1:
		st.From = f[0]
	case len(f) == 3 && strings.EqualFold(f[1], "AS"):
		st.From, st.Name = f[0], strings.ToLower(f[2])
	default:
		return st, fmt.Errorf("line %d: FROM wants IMAGE [AS NAME], got %q", in.Line, in.Args)
	}
	return st, nil
}

// Stage returns the stage named name (case-insensitive), or the last stage
// for "".
func (df Dockerfile) Stage(name string) (Stage, bool) {
	if name == "" {
		return df.Stages[len(df.Stages)-1], true
	}
	for _, s := range df.Stages {
		if s.Name == strings.ToLower(name) {
			return s, true
		}
	}
	return Stage{}, false
}

// All returns the stage's instructions named cmd, in order.
func (s Stage) All(cmd string) []Instruction {
	var out []Instruction
	for _, in := range s.Body {
		if in.Cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}

// Words splits s the way Docker splits ENV, LABEL, ARG and COPY arguments:
// on unquoted white space, with double and single quotes grouping and
// removed, and a backslash escaping the next character outside single
// quotes. An unterminated quote is an error.
func Words(s string) ([]string, error) {
	var words []string
	var b strings.Builder
	inWord := false
	var quote rune
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			b.WriteRune(r)
			escaped = false
		case r == '\\' && quote != '\'':
			escaped, inWord = true, true
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				b.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, b.String())
				b.Reset()
				inWord = false
			}
		default:
			b.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote in %q", quote, s)
	}
	if inWord {
		words = append(words, b.String())
	}
	return words, nil
}

// KeyValues reads ENV, LABEL and ARG arguments: key=value pairs (the
// legacy "ENV key value" form is read as one pair). An ARG without a value
// has value "".
func KeyValues(in Instruction) ([][2]string, error) {
	words, err := Words(in.Args)
	if err != nil {
		return nil, fmt.Errorf("line %d: %w", in.Line, err)
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("line %d: %s without arguments", in.Line, in.Cmd)
	}
	if in.Cmd == "ENV" && len(words) >= 2 && !strings.Contains(words[0], "=") {
		v := strings.TrimSpace(strings.TrimPrefix(in.Args, strings.Fields(in.Args)[0]))
		return [][2]string{{words[0], v}}, nil
	}
	var kv [][2]string
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok && in.Cmd != "ARG" {
			return nil, fmt.Errorf("line %d: %s %q is not key=value", in.Line, in.Cmd, w)
		}
		if k == "" {
			return nil, fmt.Errorf("line %d: %s has an empty key in %q", in.Line, in.Cmd, w)
		}
		kv = append(kv, [2]string{k, v})
	}
	return kv, nil
}

// Expand replaces $NAME and ${NAME} with vars[NAME] ("" when unset), as
// Docker expands ARG and ENV values in instructions. ${NAME:-word} gives word
// when NAME is unset or empty.
func Expand(s string, vars map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		if s[i+1] == '{' {
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				b.WriteString(s[i:])
				break
			}
			expr := s[i+2 : i+end]
			name, def, hasDef := strings.Cut(expr, ":-")
			v := vars[name]
			if hasDef && v == "" {
				v = def
			}
			b.WriteString(v)
			i += end
			continue
		}
		j := i + 1
		for j < len(s) && (s[j] == '_' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= 'a' && s[j] <= 'z' || j > i+1 && s[j] >= '0' && s[j] <= '9') {
			j++
		}
		if j == i+1 {
			b.WriteByte(c)
			continue
		}
		b.WriteString(vars[s[i+1:j]])
		i = j - 1
	}
	return b.String()
}
