package shapes

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/internal/jsonenc/jsonenctest"
	"github.com/gpu-preflight/gpu-preflight/internal/jsonenc/jsongen"
)

func TestGeneratedFileIsUpToDate(t *testing.T) {
	want, err := jsongen.Generate(".", "Root", "root_json.go")
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

// TestAppendJSONAgreesWithEncodingJSON: random values of every shape
// encode to encoding/json's bytes, and fail where it fails; so does
// jsonenctest.Marshal, the reference of the record form, on types that
// have none.
func TestAppendJSONAgreesWithEncodingJSON(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 11))
	var failed, nulls int
	for range 5000 {
		var r Root
		jsonenctest.Fill(rnd, &r, 40)
		r.unexported = "never written"
		want, jerr := json.Marshal(&r)
		if ref, rerr := jsonenctest.Marshal(&r); (rerr != nil) != (jerr != nil) || jerr == nil && !bytes.Equal(ref, want) {
			t.Fatalf("jsonenctest.Marshal = %s, %v\nencoding/json: %s, %v", ref, rerr, want, jerr)
		}
		got, err := r.AppendJSON([]byte("prefix"))
		switch {
		case jerr != nil:
			failed++
			if err == nil || string(got) != "prefix" {
				t.Fatalf("encoding/json fails (%v), AppendJSON gives %s, %v", jerr, got, err)
			}
		case err != nil || !bytes.Equal(got, append([]byte("prefix"), want...)):
			t.Fatalf("AppendJSON = %s, %v\nencoding/json: %s", got, err, want)
		case r.Ptr == nil:
			nulls++
		}
	}
	// Both outcomes were tried, or the test proves less than it says.
	if failed == 0 || failed == 5000 || nulls == 0 {
		t.Fatalf("%d of 5000 values failed to encode and %d had a nil pointer: the filler no longer mixes them", failed, nulls)
	}
	if got, _ := (*Root)(nil).AppendJSON(nil); string(got) != "null" {
		t.Errorf("a nil *Root encodes as %s, encoding/json writes null", got)
	}
}
