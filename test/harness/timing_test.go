package harness

import (
	"fmt"
	"testing"
)

// failures records what a check reported, in place of a test.
type failures struct {
	testing.TB
	errors []string
}

func (f *failures) Helper()                   {}
func (f *failures) Logf(string, ...any)       {}
func (f *failures) Errorf(s string, a ...any) { f.errors = append(f.errors, fmt.Sprintf(s, a...)) }

// work does n*n steps when quadratic, else n*1000.
func work(n int, quadratic bool) func() {
	steps := n * 1000
	if quadratic {
		steps = n * n
	}
	return func() {
		x := 0
		for i := range steps {
			x ^= i * 7
		}
		sink = x
	}
}

var sink int

func TestLinearPassesLinearWorkAndFailsQuadratic(t *testing.T) {
	const n = 1000
	for _, quadratic := range []bool{false, true} {
		f := &failures{TB: t}
		Linear(f, "work", 16, work(n, quadratic), work(16*n, quadratic))
		if failed := len(f.errors) > 0; failed != quadratic {
			t.Errorf("quadratic %v: failures %q", quadratic, f.errors)
		}
	}
}
