package report_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/test/reporttest"
	"github.com/gpu-preflight/gpu-preflight/test/schematest"
)

// recordArgv builds the sample record with argv recorded as mode says.
func recordArgv(t *testing.T, argv []string, mode string) report.Record {
	t.Helper()
	in := reporttest.Inputs()
	in.Argv, in.ArgvRecord = argv, mode
	r := report.New(in)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate(t, b)
	return r
}

// Each PREFLIGHT_RECORD_ARGV mode keeps what its documentation says, and
// the digest is of the argv as given, whatever the mode keeps.
func TestArgvModesKeepWhatTheySay(t *testing.T) {
	sum := sha256.Sum256([]byte(strings.Join(reporttest.Argv, "\x00") + "\x00"))
	digest := hex.EncodeToString(sum[:])
	for _, tt := range []struct {
		mode, want string
		argv       func([]string) bool
	}{
		{"", report.ArgvRedacted, func(a []string) bool { return slices.Contains(a, "--password=[redacted]") && a[0] == "python" }},
		{report.ArgvRedacted, report.ArgvRedacted, func(a []string) bool { return slices.Contains(a, "--password=[redacted]") }},
		{report.ArgvDigestOnly, report.ArgvDigestOnly, func(a []string) bool { return len(a) == 0 }},
		{report.ArgvNone, report.ArgvNone, func(a []string) bool { return len(a) == 0 }},
		{report.ArgvFull, report.ArgvFull, func(a []string) bool { return slices.Equal(a, reporttest.Argv) }},
	} {
		c := recordArgv(t, reporttest.Argv, tt.mode).Command
		if c.ArgvRecord != tt.want || !tt.argv(c.Argv) {
			t.Errorf("mode %q: argvRecord %q, argv %q", tt.mode, c.ArgvRecord, c.Argv)
		}
		wantDigest := digest
		if tt.want == report.ArgvNone {
			wantDigest = ""
		}
		if c.ArgvSHA256 != wantDigest {
			t.Errorf("mode %q: argvSha256 %q, want %q", tt.mode, c.ArgvSHA256, wantDigest)
		}
		if wantDropped := len(reporttest.Argv) - len(c.Argv); c.ArgvDropped != wantDropped {
			t.Errorf("mode %q: argvDropped %d, want %d", tt.mode, c.ArgvDropped, wantDropped)
		}
	}
}

// The digest tells commands apart that redaction makes look the same, and
// ["a b"] from ["a", "b"].
func TestArgvDigestTellsCommandsApart(t *testing.T) {
	a := report.ArgvDigest([]string{"train", "--token", "one"})
	b := report.ArgvDigest([]string{"train", "--token", "two"})
	if a == b || a != report.ArgvDigest([]string{"train", "--token", "one"}) {
		t.Errorf("digests %s and %s", a, b)
	}
	if report.ArgvDigest([]string{"a b"}) == report.ArgvDigest([]string{"a", "b"}) {
		t.Error(`["a b"] and ["a", "b"] have one digest`)
	}
	if report.ArgvDigest(nil) != "" {
		t.Error("a run without a command has a digest")
	}
}

// argv is capped as env is: 1.9 MiB of arguments (issue 24 made an 11.8
// MB record of them) give a record of under 100 KiB, in count and bytes,
// with the number left out.
func TestArgvIsCapped(t *testing.T) {
	for _, tt := range []struct {
		name    string
		argv    []string
		dropped bool // whether elements are left out, or only cut
	}{
		{"many-short", append([]string{"python"}, slices.Repeat([]string{strings.Repeat("x", 95)}, 20000)...), true},
		{"few-long", append([]string{"python"}, slices.Repeat([]string{"--data=" + strings.Repeat("y", 128<<10-8)}, 15)...), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			total := 0
			for _, a := range tt.argv {
				total += len(a)
			}
			if total < 1800<<10 {
				t.Fatalf("argv holds %d bytes, want about 1.9 MiB", total)
			}
			for _, mode := range []string{report.ArgvRedacted, report.ArgvFull} {
				r := recordArgv(t, tt.argv, mode)
				b, _ := json.Marshal(r)
				if len(b) > 100<<10 {
					t.Errorf("%s: the record is %d bytes", mode, len(b))
				}
				c := r.Command
				if (c.ArgvDropped > 0) != tt.dropped || len(c.Argv)+c.ArgvDropped != len(tt.argv) || c.Argv[0] != "python" {
					t.Errorf("%s: %d elements kept, %d dropped of %d", mode, len(c.Argv), c.ArgvDropped, len(tt.argv))
				}
				if len(c.Argv) > report.MaxRecordArgs {
					t.Errorf("%s: %d elements kept, more than %d", mode, len(c.Argv), report.MaxRecordArgs)
				}
				for _, a := range c.Argv {
					if len(a) > 4200 {
						t.Errorf("%s: an element of %d bytes kept", mode, len(a))
						break
					}
				}
			}
		})
	}
}
