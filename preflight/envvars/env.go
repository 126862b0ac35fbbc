// Package envvars is the environment as gpu-preflight reads it: parsed once
// into Env, and Read, the table of the variables read from a container's
// environment. The table decides what the container facts keep, what the
// image scan reads (and so what makes a baked manifest stale) and, with
// its own families, what a provenance record keeps (report/redact.Allowed).
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

// Parse reads an environment in os.Environ form. An entry without '=' or a
// name is no variable (getenv(3) cannot return it); of a name given twice
// the first wins, as for glibc's getenv. A variable set empty is kept: an
// empty CUDA_VISIBLE_DEVICES hides every GPU, an unset one none.
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
