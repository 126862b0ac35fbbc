package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/internal/jsonenc/jsonenctest"
	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/report/termsafe"
	"github.com/gpu-preflight/gpu-preflight/test/reporttest"
)

// TestMarshalIsMarshalIndent: a record's file holds exactly what
// json.MarshalIndent wrote for it before the generated encoder, with what a
// terminal would act on escaped, for the sample run and for random records.
func TestMarshalIsMarshalIndent(t *testing.T) {
	sample := report.New(reporttest.Inputs())
	finished := sample
	if err := finished.Finish(0, 0, reporttest.Time.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	records := []report.Record{sample, finished, {}}
	rnd := rand.New(rand.NewPCG(3, 5))
	for range 500 {
		var r report.Record
		jsonenctest.Fill(rnd, &r, 0) // finite floats: both encode
		records = append(records, r)
	}
	for _, r := range records {
		want, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got, err := Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if want = termsafe.JSON(append(want, '\n')); !bytes.Equal(got, want) {
			t.Fatalf("Marshal wrote\n%s\njson.MarshalIndent writes\n%s", got, want)
		}
	}
}

func TestFileSHA256IsTheDigestOfTheFileMarshalMakes(t *testing.T) {
	records := []report.Record{report.New(reporttest.Inputs()), {}}
	rnd := rand.New(rand.NewPCG(7, 11))
	for range 300 {
		var r report.Record
		jsonenctest.Fill(rnd, &r, 0)
		records = append(records, r)
	}
	for _, r := range records {
		b, err := Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		compact, _ := r.AppendJSON(nil)
		if FileSHA256(compact) != sha256.Sum256(b) {
			t.Fatalf("FileSHA256 differs from the digest of\n%s", b)
		}
	}
}

// A record file shown with cat acts on no control or format character,
// and decodes to the exact bytes the run saw.
func TestARecordFileIsSafeToCat(t *testing.T) {
	const name = "NVIDIA H100\x1b]0;PWNED\x07\x1b[2J\u202e\u200b\u0085"
	r := report.New(reporttest.Inputs())
	r.Host.GPUs[0].Name = name
	b, err := Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for line := range bytes.Lines(b) {
		if line = bytes.TrimSuffix(line, []byte("\n")); termsafe.String(string(line)) != string(line) {
			t.Errorf("a line of the record file holds characters a terminal acts on: %q", line)
		}
	}
	var back report.Record
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Host.GPUs[0].Name != name {
		t.Errorf("the GPU name read back is %q, want %q", back.Host.GPUs[0].Name, name)
	}
}
