package redact

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/test/harness"
	"github.com/gpu-preflight/gpu-preflight/test/redacttest"
)

// Every form of the corpus loses its credential, and keeps the program and
// the flags that say which command ran.
func TestArgvCorpusLeaksNothingAndKeepsTheCommand(t *testing.T) {
	if len(redacttest.Forms) < 80 {
		t.Fatalf("the corpus has %d forms, want at least 80", len(redacttest.Forms))
	}
	for _, f := range redacttest.Forms {
		got := Argv(f.Argv)
		if l := redacttest.Leaks(strings.Join(got, "\x00"), f.Secrets); len(l) > 0 {
			t.Errorf("%s: %q survived redaction:\nin:  %q\nout: %q", f.Name, l, f.Argv, got)
			continue
		}
		for _, k := range f.Keep {
			if !slices.Contains(got, k) {
				t.Errorf("%s: %q was lost; the command is no longer identifiable:\nin:  %q\nout: %q", f.Name, k, f.Argv, got)
			}
		}
		if again := Argv(got); !reflect.DeepEqual(again, got) {
			t.Errorf("%s: Argv is not idempotent: %q -> %q", f.Name, got, again)
		}
	}
}

// Commands without a credential come out exactly as they went in.
func TestArgvKeepsCommandsWithoutCredentials(t *testing.T) {
	for _, argv := range redacttest.Kept {
		if got := Argv(argv); !reflect.DeepEqual(got, argv) {
			t.Errorf("Argv(%q)\n = %q, want it unchanged", argv, got)
		}
	}
}

// Redaction takes time in proportion to its input, however the input is
// made: an environment value or argv element of the shapes each rule
// looks for, over and over, 16 times longer, takes about 16 times as long,
// not the 256 times a rule that rescans the rest of the string for each
// occurrence would take.
func TestRedactionIsLinearOnRepeatedShapes(t *testing.T) {
	const size = 1 << 18
	for _, unit := range []string{
		":", "a=", "a:b=", "x@", "u:p@", "Authorization:", "-----BEGIN -----END -----", "-----BEGIN ",
		"eyJ", "eyJa.", "ghp_", "hf_a", "://h/t/", "/t/", `"k":`, `"password":`, `\"`, `\"pwd\":`,
		"--token ", "login ", "a_b.token ", "'", "' '", "?a=1&", "hooks.slack.com/services/",
	} {
		redact := func(n int) func() {
			s := strings.Repeat(unit, n/len(unit))
			return func() {
				Value(s)
				Argv([]string{"x", s})
				Argv(strings.Split(s[:len(s)/16], " "))
			}
		}
		harness.Linear(t, fmt.Sprintf("%q repeated", unit), 16, redact(size/16), redact(size))
	}
}
