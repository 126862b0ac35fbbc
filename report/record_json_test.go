package report_test

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/internal/jsonenc/jsonenctest"
	"github.com/gpu-preflight/gpu-preflight/internal/jsonenc/jsongen"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/test/reporttest"
)

// realRecord is check --json's record from a real machine (testdata/real).
const realRecord = "../testdata/real/debian-libcuda1-535.309.01-no-gpu/check.json"

func TestRecordJSONIsUpToDate(t *testing.T) {
	want, err := jsongen.Generate(".", "record_json.go", "Record")
	if err != nil {
		t.Fatal(err)
	}
	got := reporttest.ReadFile(t, "record_json.go")
	if !bytes.Equal(got, want) {
		t.Error("record_json.go is not what jsongen writes for the record's types: run go generate ./report (make generate)")
	}
}

// sameAsReference fails unless AppendJSON appends exactly what
// jsonenctest.Marshal, the record form by reflection, writes for r, or
// fails where it fails (and then appends nothing). It reports whether r
// encoded.
func sameAsReference(t testing.TB, r *report.Record) bool {
	t.Helper()
	want, werr := jsonenctest.Marshal(r)
	got, err := r.AppendJSON([]byte("prefix"))
	if werr != nil {
		if err == nil || string(got) != "prefix" {
			t.Fatalf("the reference fails (%v); AppendJSON gives %s, %v", werr, got, err)
		}
		return false
	}
	if err != nil || !bytes.Equal(got, append([]byte("prefix"), want...)) {
		t.Fatalf("AppendJSON = %s, %v\nthe reference writes %s", got, err, want)
	}
	return true
}

// realRecords are the records the repository holds: the sample run as
// built, finished and not started, and one from a real machine.
func realRecords(t testing.TB) []report.Record {
	r := report.New(reporttest.Inputs())
	finished, notStarted := r, r
	if err := finished.Finish(137, 9, reporttest.Time.Add(1500*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := notStarted.NotStarted(127, 0, reporttest.Time.Add(time.Millisecond), "exec: \"trian.py\": not found <&>"); err != nil {
		t.Fatal(err)
	}
	var machine report.Record
	if err := json.Unmarshal(reporttest.ReadFile(t, realRecord), &machine); err != nil {
		t.Fatal(err)
	}
	return []report.Record{r, finished, notStarted, machine, {}}
}

func TestRecordAppendJSONAgreesOnRealRecords(t *testing.T) {
	for _, r := range realRecords(t) {
		sameAsReference(t, &r)
	}
	if got, err := (*report.Record)(nil).AppendJSON(nil); string(got) != "null" || err != nil {
		t.Errorf("a nil *Record encodes as %s, %v; want null", got, err)
	}
}

// TestRecordAppendJSONAgreesOnRandomRecords: records with every field
// random (strings with HTML characters, U+2028, control bytes and invalid
// UTF-8; nil and empty slices and maps; nil pointers; extreme numbers;
// NaN now and then) encode to the reference's bytes.
func TestRecordAppendJSONAgreesOnRandomRecords(t *testing.T) {
	rnd := rand.New(rand.NewPCG(2026, 12))
	const n = 3000
	encoded := 0
	for range n {
		var r report.Record
		jsonenctest.Fill(rnd, &r, 200)
		if sameAsReference(t, &r) {
			encoded++
		}
	}
	// Both outcomes were tried, or the test proves less than it says.
	if encoded == 0 || encoded == n {
		t.Fatalf("%d of %d random records encoded: the filler no longer mixes in NaN", encoded, n)
	}
}

// TestRecordAppendJSONNaNSaysWhere: the one record value JSON cannot hold
// fails the encoding with the field's name, as Marshal fails.
func TestRecordAppendJSONNaNSaysWhere(t *testing.T) {
	r := report.New(reporttest.Inputs())
	r.Host.Cgroup.CPUs = math.Inf(1)
	_, err := r.AppendJSON(nil)
	if err == nil || err.Error() != "facts.Cgroup.cpuLimit is +Inf: NaN and infinity have no JSON number" {
		t.Errorf("AppendJSON with an infinite CPU limit: %v", err)
	}
}

// FuzzRecordAppendJSON puts fuzzed strings and numbers where a record
// holds them (map keys, list elements, omitempty fields included), and
// holds AppendJSON to the reference.
func FuzzRecordAppendJSON(f *testing.F) {
	for _, r := range realRecords(f) {
		f.Add(r.Host.Hostname, r.Image.Ref, r.Host.NVML.DurationMillis, int64(r.Command.UID), r.Host.ShmBytes, r.Image.Pinned)
		for k, v := range r.Env {
			f.Add(k, v, r.Host.Cgroup.CPUs, int64(r.EnvDropped), r.Host.Cgroup.MemoryBytes, r.Outcome != nil)
		}
		for _, c := range r.Checks {
			f.Add(c.Message, c.Remedy, r.Host.CUDA.DurationMillis, int64(r.Decision.ExitCode), uint64(len(c.ID)), c.NodeFault)
		}
	}
	f.Add("<\u2028\x00\xff>", "&\"\\", 1e-7, int64(math.MinInt64), uint64(math.MaxUint64), true)
	f.Fuzz(func(t *testing.T, s1, s2 string, x float64, i int64, u uint64, b bool) {
		r := report.New(reporttest.Inputs())
		r.Host.Hostname, r.Image.Ref, r.Checks[0].Message = s1, s2, s1+s2
		r.Host.GPUs[0].Errors = map[string]string{s2: s1}
		r.Env[s1] = s2
		r.Command.Argv = append(r.Command.Argv, s1, s2)
		r.Image.CUDASources = append(r.Image.CUDASources, facts.CUDASource{Kind: s1, Full: s2})
		r.Host.NVML.DurationMillis, r.Host.Cgroup.CPUs = x, -x
		r.Command.UID, r.EnvDropped = int(i), int(-i)
		r.Host.ShmBytes, r.Host.GPUs[1].ECCUncorrectedVolatile = u, &u
		r.Image.Pinned = b
		if b {
			r.Outcome = &report.Outcome{ExitCode: int(i), DurationSeconds: x, NotStarted: s2}
		}
		sameAsReference(t, &r)
	})
}

func BenchmarkRecordAppendJSON(b *testing.B) {
	r := report.New(reporttest.Inputs())
	var buf []byte
	for b.Loop() {
		var err error
		if buf, err = r.AppendJSON(buf[:0]); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(buf)))
}

// BenchmarkRecordMarshal is encoding/json's reflection over the record's
// types, without the MarshalJSON that calls the generated encoder.
func BenchmarkRecordMarshal(b *testing.B) {
	type reflected report.Record
	r := reflected(report.New(reporttest.Inputs()))
	var n int
	for b.Loop() {
		buf, err := json.Marshal(&r)
		if err != nil {
			b.Fatal(err)
		}
		n = len(buf)
	}
	b.SetBytes(int64(n))
}
