package examples

import (
	"fmt"
	"strings"
)

// FluentBitSection is one [SECTION] of a Fluent Bit classic configuration
// file, with its entries in file order (a key such as Rule may repeat).
type FluentBitSection struct {
	Name    string // upper-cased: SERVICE, INPUT, FILTER, OUTPUT, PARSER...
	Line    int
	Entries [][2]string
}

// Get returns the first value of key, compared case-insensitively as Fluent Bit does.
func (s FluentBitSection) Get(key string) (string, bool) {
	for _, e := range s.Entries {
		if strings.EqualFold(e[0], key) {
			return e[1], true
		}
	}
	return "", false
}

// GetAll returns every value of key, in order.
func (s FluentBitSection) GetAll(key string) []string {
	var out []string
	for _, e := range s.Entries {
		if strings.EqualFold(e[0], key) {
			out = append(out, e[1])
		}
	}
	return out
}

// ParseFluentBit reads the structure of Fluent Bit's classic configuration
// as its documentation ("Configuration file") describes it: [NAME] at column
// 0, entries as "Key Value" lines indented alike, # comments. @INCLUDE and
// @SET are refused: the examples do not use them and a test could not follow.
func ParseFluentBit(src string) ([]FluentBitSection, error) {
	var sections []FluentBitSection
	indent := ""
	for i, raw := range strings.Split(src, "\n") {
		n := i + 1
		line := strings.TrimRight(raw, " \r")
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if strings.HasPrefix(trimmed, "@") {
			return nil, fmt.Errorf("line %d: %s: directives are not supported here", n, strings.Fields(trimmed)[0])
		}
		if strings.HasPrefix(line, "[") {
			if !strings.HasSuffix(line, "]") || len(line) < 3 {
				return nil, fmt.Errorf("line %d: section header %q is not [NAME]", n, line)
			}
			name := strings.ToUpper(strings.TrimSpace(line[1 : len(line)-1]))
			if name == "" || strings.ContainsAny(name, " \t[]") {
				return nil, fmt.Errorf("line %d: section header %q is not [NAME]", n, line)
			}
			sections = append(sections, FluentBitSection{Name: name, Line: n})
			continue
		}
		if len(sections) == 0 {
			return nil, fmt.Errorf("line %d: entry %q before any [SECTION]", n, trimmed)
		}
		lead := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
		switch {
		case lead == "":
			return nil, fmt.Errorf("line %d: entry %q is not indented", n, trimmed)
		case strings.Contains(lead, "\t"):
			return nil, fmt.Errorf("line %d: entry indented with a tab; use spaces", n)
		case indent == "":
			indent = lead
		case lead != indent:
			return nil, fmt.Errorf("line %d: entry indented by %d spaces, earlier entries by %d", n, len(lead), len(indent))
		}
		key, value, _ := strings.Cut(trimmed, " ")
		value = strings.TrimSpace(value)
		if value == "" {
			return nil, fmt.Errorf("line %d: key %q has no value", n, key)
		}
		s := &sections[len(sections)-1]
		s.Entries = append(s.Entries, [2]string{key, value})
	}
	return sections, nil
}
