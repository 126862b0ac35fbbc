package harness

import (
	"fmt"
	"testing"
	"time"
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

// A run cut at its deadline gets a second, or ten times a run without the
// hang, past it; one past that is timed against a second such run, so a
// machine that got busier in between does not fail it.
func TestWithinDeadlineGivesSlackFromTheReferenceRuns(t *testing.T) {
	const deadline = 2 * time.Second
	for _, tt := range []struct {
		took, before, again time.Duration
		fails               bool
	}{
		{2900 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond, false},
		{3100 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond, true},
		{6 * time.Second, 500 * time.Millisecond, 10 * time.Millisecond, false},
		{6 * time.Second, 10 * time.Millisecond, 500 * time.Millisecond, false},
		{8 * time.Second, 500 * time.Millisecond, 500 * time.Millisecond, true},
	} {
		f := &failures{TB: t}
		asked := false
		WithinDeadline(f, "run", tt.took, deadline, tt.before, func() time.Duration { asked = true; return tt.again })
		if failed := len(f.errors) > 0; failed != tt.fails {
			t.Errorf("%+v: failures %q", tt, f.errors)
		}
		if want := tt.took > deadline+max(time.Second, 10*tt.before); asked != want {
			t.Errorf("%+v: a second reference run taken: %v, want %v", tt, asked, want)
		}
	}
}
