package recordshapes

import (
	"bytes"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/internal/jsonenc"
	"github.com/gpu-preflight/gpu-preflight/internal/jsonenc/jsonenctest"
	"github.com/gpu-preflight/gpu-preflight/internal/jsonenc/jsongen"
)

func TestGeneratedFileIsUpToDate(t *testing.T) {
	want, err := jsongen.GenerateRecord(".", "record_json.go", "Fact", "Other")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("record_json.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("record_json.go is not what jsongen writes for these types: run go generate ./internal/jsonenc/...")
	}
}

// TestAppendRecordJSONAgreesWithTheReference: random values encode to
// jsonenctest.Marshal's bytes, and fail where it fails.
func TestAppendRecordJSONAgreesWithTheReference(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 5))
	var failed, nils int
	for range 5000 {
		var f Fact
		jsonenctest.Fill(rnd, &f, 40)
		want, werr := jsonenctest.Marshal(&f)
		var e jsonenc.Encoder
		got := f.AppendRecordJSON(&e, []byte("prefix"))
		switch {
		case werr != nil:
			failed++
			if e.Err() == nil {
				t.Fatalf("the reference fails (%v), AppendRecordJSON gives %s", werr, got)
			}
		case e.Err() != nil || !bytes.Equal(got, append([]byte("prefix"), want...)):
			t.Fatalf("AppendRecordJSON = %s, %v\nreference: %s", got, e.Err(), want)
		case f.List == nil && f.Map == nil:
			nils++
		}
	}
	if failed == 0 || failed == 5000 || nils == 0 {
		t.Fatalf("%d of 5000 values failed to encode and %d had nil slices and maps: the filler no longer mixes them", failed, nils)
	}
}

// TestRecordFormWritesEveryField: the record form ignores omitempty unless
// a record tag keeps it, leaves out what a record tag leaves out, and
// writes nil slices and maps empty.
func TestRecordFormWritesEveryField(t *testing.T) {
	var e jsonenc.Encoder
	got := string((&Fact{Skipped: "x", Hidden: "h"}).AppendRecordJSON(&e, nil))
	want := `{"first":"","recordName":0,"ratio":0,"ptr":null,"list":[],"nested":[],"map":{},"inner":null,"inners":[],` +
		`"leaf":{"a":"","b":[],"c":{},"d":null},"byName":{},"hidden":"h"}`
	if got != want || e.Err() != nil {
		t.Errorf("AppendRecordJSON = %s, %v\nwant %s", got, e.Err(), want)
	}
	if got := string((&Other{}).AppendRecordJSON(&e, nil)); got != "{}" {
		t.Errorf("Other = %s, want {} (omitempty kept by its record tag)", got)
	}
}
