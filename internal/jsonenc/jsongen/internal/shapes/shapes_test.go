package shapes

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/internal/jsonenc"
	"github.com/gpu-preflight/gpu-preflight/internal/jsonenc/jsonenctest"
	"github.com/gpu-preflight/gpu-preflight/internal/jsonenc/jsongen"
)

func TestGeneratedFileIsUpToDate(t *testing.T) {
	want, err := jsongen.Generate(".", "root_json.go", "Root", "Other")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("root_json.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("root_json.go is not what jsongen writes for these types: run go generate ./internal/jsonenc/...")
	}
}

// TestAppendRecordJSONAgreesWithTheReference: random values of every shape
// encode to jsonenctest.Marshal's bytes, and fail where it fails.
func TestAppendRecordJSONAgreesWithTheReference(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 11))
	var failed, nils int
	for range 5000 {
		var r Root
		jsonenctest.Fill(rnd, &r, 40)
		r.unexported = "never written"
		want, werr := jsonenctest.Marshal(&r)
		var e jsonenc.Encoder
		got := r.AppendRecordJSON(&e, []byte("prefix"))
		switch {
		case werr != nil:
			failed++
			if e.Err() == nil {
				t.Fatalf("the reference fails (%v), AppendRecordJSON gives %s", werr, got)
			}
		case e.Err() != nil || !bytes.Equal(got, append([]byte("prefix"), want...)):
			t.Fatalf("AppendRecordJSON = %s, %v\nreference: %s", got, e.Err(), want)
		case r.Ptr == nil && r.Names == nil && r.Table == nil:
			nils++
		}
	}
	// Both outcomes were tried, or the test proves less than it says.
	if failed == 0 || failed == 5000 || nils == 0 {
		t.Fatalf("%d of 5000 values failed to encode and %d had nil pointers, slices and maps: the filler no longer mixes them", failed, nils)
	}
}

// TestEveryFieldIsWritten: omitempty is ignored unless a record tag keeps
// it, a record tag leaves out or renames, nil slices and maps are empty.
func TestEveryFieldIsWritten(t *testing.T) {
	var e jsonenc.Encoder
	got := string((&Root{Hidden: "h", Shown: "s", Skipped: "x"}).AppendRecordJSON(&e, nil))
	want := `{"third":false,"NoTag":"","shown":"s","recordName":0,"level":"","flag":false,"count":0,"size":0,"ratio":0,` +
		`"u":0,"up":0,"i64":0,"ptr":null,"leaf":null,"names":[],"table":{},"nested":[],"empty":{},"self":null}`
	if got != want || e.Err() != nil {
		t.Errorf("AppendRecordJSON = %s, %v\nwant %s", got, e.Err(), want)
	}
	if got := string((&Other{}).AppendRecordJSON(&e, nil)); got != "{}" {
		t.Errorf("Other = %s, want {}", got)
	}
	leaf := Leaf{}
	if got := string((&Root{Leaf: &leaf}).AppendRecordJSON(&e, nil)); !bytes.Contains([]byte(got), []byte(`"leaf":{"a":"","b":[],"c":{},"d":null}`)) {
		t.Errorf("a Leaf is not written whole: %s", got)
	}
}

// plainRoot has Root's fields without its AppendRecordJSON method.
type plainRoot Root

// TestReferenceIsEncodingJSONOutsideTheRecordForm: on types without
// AppendRecordJSON the reference writes what encoding/json writes, so the
// record form differs from encoding/json only where it says.
func TestReferenceIsEncodingJSONOutsideTheRecordForm(t *testing.T) {
	rnd := rand.New(rand.NewPCG(13, 17))
	for range 3000 {
		var r plainRoot
		jsonenctest.Fill(rnd, &r, 40)
		r.Self = nil
		want, jerr := json.Marshal(&r)
		got, err := jsonenctest.Marshal(&r)
		if (err != nil) != (jerr != nil) || jerr == nil && !bytes.Equal(got, want) {
			t.Fatalf("jsonenctest.Marshal = %s, %v\nencoding/json: %s, %v", got, err, want, jerr)
		}
	}
}
