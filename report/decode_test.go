package report

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

// tokenFields splits a JSON object with json.Decoder's tokens: the slow,
// obviously right way decodeObject must agree with.
func tokenFields(p []byte) ([]field, bool) {
	dec := json.NewDecoder(bytes.NewReader(p))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var fields []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, false
		}
		fields = append(fields, field{key: tok.(string), raw: raw})
	}
	return fields, true
}

func sameFields(a, b []field) bool {
	return slices.EqualFunc(a, b, func(x, y field) bool { return x.key == y.key && bytes.Equal(x.raw, y.raw) })
}

var logLines = []string{
	`{"level":"info","check":"driver","status":"warn","remedy":"run with GPUs","time":"2026-11-29T18:09:34.741957885Z","message":"no NVIDIA driver found"}` + "\n",
	`{"level":"info","recordBytes":12,"record":{"a":[1,{"b":"}\"]"}],"c":null},"time":"t","message":"provenance"}`,
	`{"level":"warn","error":"open /x: no such file","elapsedMs":1.337,"ok":true,"n":-3e-7,"message":"m"}`,
	` { "spaced" : [ 1 , 2 ] , "key\"with\\escapes\u00e9" : "v" } `,
	`{}`,
	`{"dup":1,"dup":2}`,
}

func TestDecodeObjectSplitsTopLevelFieldsAsJSONDecoderDoes(t *testing.T) {
	for _, line := range logLines {
		want, _ := tokenFields([]byte(line))
		got, err := decodeObject([]byte(line))
		if err != nil || !sameFields(got, want) {
			t.Errorf("decodeObject(%s) = %q, %v; want %q", line, got, err, want)
		}
	}
}

func TestDecodeObjectRefusesWhatIsNotAJSONObject(t *testing.T) {
	for _, line := range []string{``, `[1,2]`, `"s"`, `{"a":}`, `{"a":1} trailing`, `{"a":1`, "{\"a\":\"\xff\"", `{1:2}`} {
		if fields, err := decodeObject([]byte(line)); err == nil {
			t.Errorf("decodeObject(%q) = %q, want an error", line, fields)
		}
	}
}

func FuzzDecodeObject(f *testing.F) {
	for _, line := range logLines {
		f.Add([]byte(line))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		got, err := decodeObject(p)
		if err != nil {
			return
		}
		want, ok := tokenFields(p)
		if !ok || !sameFields(got, want) {
			t.Fatalf("decodeObject(%q) = %q; json.Decoder gives %q (ok %v)", p, got, want, ok)
		}
	})
}
