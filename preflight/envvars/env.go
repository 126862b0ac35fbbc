// Package envvars is the environment as gpu-preflight reads it: Env, parsed once,
// and Read, the variables the container facts, the image scan and the record keep.
package envvars

import (
	"iter"
	"strings"
)

// Env is one environment, parsed once: the os.Environ list and its variables by name.
type Env struct {
	list []string
	vars map[string]string
}

// Parse reads os.Environ form as glibc's getenv does: no '=' or no name is no
// variable, the first of a name wins, and an empty value is kept.
func Parse(list []string) Env {
	vars := make(map[string]string, len(list))
	for _, kv := range list {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if _, dup := vars[name]; !dup {
			vars[name] = value
		}
	}
	return Env{list: list, vars: vars}
}

// List is the environment as given to Parse, for a child that must get it unchanged.
func (e Env) List() []string { return e.list }

// Lookup returns the value of variable name and whether it is set.
func (e Env) Lookup(name string) (string, bool) {
	v, ok := e.vars[name]
	return v, ok
}

// Len is the number of variables.
func (e Env) Len() int { return len(e.vars) }

// All yields every variable and its value, in no particular order.
func (e Env) All() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for k, v := range e.vars {
			if !yield(k, v) {
				return
			}
		}
	}
}

// Filter returns the variables whose names keep accepts.
func (e Env) Filter(keep func(name string) bool) map[string]string {
	out := map[string]string{}
	for k, v := range e.vars {
		if keep(k) {
			out[k] = v
		}
	}
	return out
}

// Names is a set of variable names: exact names, and families by prefix ("NVIDIA_REQUIRE_").
type Names struct {
	Exact    map[string]bool
	Prefixes []string
}

// Has reports whether name is one of the names or starts with one of the prefixes.
func (n Names) Has(name string) bool {
	if n.Exact[name] {
		return true
	}
	for _, p := range n.Prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
