package nccl

import "strings"

// List is NCCL_SOCKET_IFNAME's or NCCL_IB_HCA's list: "^" excludes, "="
// makes names exact, entries are prefixes with an optional ":PORT".
type List struct {
	Exclude bool    `json:"exclude,omitempty"`
	Exact   bool    `json:"exact,omitempty"`
	Entries []Entry `json:"entries"`
}

// Entry is one name of a List; Port is -1 when it names none.
type Entry struct {
	Prefix string `json:"prefix"`
	Port   int    `json:"port"`
}

// MAX_IFS, MAX_IB_DEVS and netIf.prefix's size.
const (
	MaxInterfaces = 16
	MaxHCAs       = 32
	maxPrefix     = 63
)

// ParseList reads s as NCCL v does, keeping at most max entries.
func ParseList(s string, max int, v Version) List {
	var l List
	if s, l.Exclude = strings.CutPrefix(s, "^"); true {
		s, l.Exact = strings.CutPrefix(s, "=")
	}
	if v.atLeast(listTokenizer) {
		l.Entries = tokenized(s, max)
	} else {
		l.Entries = scanned(s, max)
	}
	return l
}

// tokenized is parseStringList from 2.30.7: strtok_r on ",", then strsep
// on ":"; an empty port is no port.
func tokenized(s string, max int) []Entry {
	var out []Entry
	for entry := range strings.SplitSeq(s, ",") {
		if len(out) == max {
			break
		}
		prefix, rest, _ := strings.Cut(entry, ":")
		if prefix == "" {
			continue
		}
		port := -1
		if p, _, _ := strings.Cut(rest, ":"); p != "" {
			port = atoi(p)
		}
		out = append(out, Entry{prefix[:min(len(prefix), maxPrefix)], port})
	}
	return out
}

// scanned is parseStringList before 2.30.7: "name:" has port 0.
func scanned(s string, max int) []Entry {
	var out []Entry
	var prefix strings.Builder
	add := func(port int) {
		if prefix.Len() > 0 {
			out = append(out, Entry{prefix.String()[:min(prefix.Len(), maxPrefix)], port})
			prefix.Reset()
		}
	}
	for i := 0; i <= len(s) && len(out) < max; i++ {
		if i == len(s) || s[i] == ',' {
			add(-1)
			continue
		}
		if s[i] != ':' {
			prefix.WriteByte(s[i])
			continue
		}
		next := strings.IndexByte(s[i:], ',')
		if next < 0 {
			next = len(s) - i
		}
		add(atoi(s[i+1 : i+next]))
		i += next
	}
	return out
}

// atoi is C's.
func atoi(s string) int {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg, s = s[0] == '-', s[1:]
	}
	n := 0
	for i := 0; i < len(s) && '0' <= s[i] && s[i] <= '9' && n < 1<<31; i++ {
		n = n*10 + int(s[i]-'0')
	}
	if neg {
		return -n
	}
	return n
}

// Match is matchIfList (an empty list matches all) negated by "^"; port is
// -1 for an interface.
func (l List) Match(name string, port int) bool {
	return l.matchAny(name, port) != l.Exclude
}

func (l List) matchAny(name string, port int) bool {
	if len(l.Entries) == 0 {
		return true
	}
	for _, e := range l.Entries {
		nameOK := strings.HasPrefix(name, e.Prefix)
		if l.Exact {
			nameOK = name == e.Prefix
		}
		if nameOK && (port == -1 || e.Port == -1 || port == e.Port) {
			return true
		}
	}
	return false
}
