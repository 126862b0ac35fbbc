package jsonbound

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// shape is what encoding/json's own tokenizer sees of a valid document:
// its values (every token but a closing delimiter) and its deepest
// nesting.
func shape(t *testing.T, data []byte) (values, depth int, ok bool) {
	if !json.Valid(data) { // Limits bound one document; a stream ("00" is two) is not one
		return 0, 0, false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	d := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return values, depth, true
		}
		if err != nil {
			return 0, 0, false
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			d++
			depth = max(depth, d)
		case json.Delim('}'), json.Delim(']'):
			d--
			continue
		}
		values++
	}
}

// realDocuments are JSON documents that real tools wrote: podman's image
// inspect, an OCI layout skopeo wrote, runc's spec.
func realDocuments(t testing.TB) [][]byte {
	m, _ := filepath.Glob("../../preflight/imageconfig/testdata/*.json")
	more, _ := filepath.Glob("../../preflight/imageconfig/testdata/oci-layout/blobs/sha256/*")
	var out [][]byte
	for _, p := range append(append(m, more...), "../../preflight/imageconfig/testdata/oci-layout/index.json") {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	if len(out) < 5 {
		t.Fatalf("found %d real documents", len(out))
	}
	return out
}

// checkAgrees holds Check to encoding/json's count on a valid document:
// the exact limits pass, one value or one level less fails.
func checkAgrees(t *testing.T, data []byte) {
	values, depth, ok := shape(t, data)
	if !ok {
		return
	}
	exact := Limits{Bytes: len(data), Depth: depth, Values: values}
	if err := Check(data, exact); err != nil {
		t.Fatalf("Check(%.80q, %+v) = %v; encoding/json counts %d values %d deep", data, exact, err, values, depth)
	}
	if values > 0 {
		if err := Check(data, Limits{Bytes: len(data), Depth: depth, Values: values - 1}); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("Check(%.80q) with %d values allowed of %d = %v", data, values-1, values, err)
		}
	}
	if depth > 0 {
		if err := Check(data, Limits{Bytes: len(data), Depth: depth - 1, Values: values}); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("Check(%.80q) %d deep with %d allowed = %v", data, depth, depth-1, err)
		}
	}
}

func TestCheckCountsAsEncodingJSONDoes(t *testing.T) {
	for _, d := range realDocuments(t) {
		checkAgrees(t, d)
	}
	for _, s := range []string{`{}`, `[]`, `0`, `"a\"b\\"`, `{"a":[1,-2.5e3,true,false,null,"x"],"b":{"c":{}}}`, ` [ "\u00e9" , 1 ] `} {
		checkAgrees(t, []byte(s))
	}
}

// The hostile documents of issue 24 are refused before they are decoded,
// with next to nothing allocated.
func TestUnmarshalRefusesHostileDocumentsCheaply(t *testing.T) {
	l := Limits{Bytes: 4 << 20, Depth: 32, Values: 200_000}
	var members strings.Builder
	members.WriteString(`{"env":{`)
	for i := 0; members.Len() < 4<<20-16; i++ {
		if i > 0 {
			members.WriteByte(',')
		}
		members.WriteString(`"` + string(rune('a'+i%26)) + strings.Repeat("k", i%7) + `":""`)
	}
	members.WriteString(`}}`)
	for name, doc := range map[string]string{
		"a 4 MiB map":       members.String(),
		"4 MiB of nesting":  strings.Repeat("[", 4<<20-1),
		"a million strings": "[" + strings.Repeat(`"",`, 1_000_000) + `""]`,
	} {
		data := []byte(doc)
		var v struct {
			Env map[string]string `json:"env"`
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := Unmarshal(data, &v, l)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: %v, want ErrTooLarge", name, err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
			t.Errorf("%s: refusing it allocated %d bytes", name, n)
		}
		t.Logf("%s: %v", name, err)
	}
	if err := Unmarshal([]byte(`{"env":{"a":"b"}}`), &struct{}{}, Limits{Bytes: 16, Depth: 2, Values: 10}); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "17 bytes (at most 16)") {
		t.Errorf("a document over Bytes: %v", err)
	}
}

// FuzzCheck holds Check to encoding/json's count on any valid document,
// from seeds of real ones.
func FuzzCheck(f *testing.F) {
	for _, d := range realDocuments(f) {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = Check(data, Limits{Bytes: len(data), Depth: 8, Values: 100})
		checkAgrees(t, data)
	})
}
