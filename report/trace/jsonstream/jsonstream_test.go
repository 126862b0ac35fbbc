package jsonstream_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/gpu-preflight/gpu-preflight/report/trace/jsonstream"
	"github.com/gpu-preflight/gpu-preflight/test/tracetest"
)

// tokens reads every token of in, the text of keys and strings too,
// going on at the next line after a syntax error.
func tokens(in string, split ...int) (out []string, errs []error) {
	return tokensOf(jsonstream.NewDecoder(strings.NewReader(in)), split...)
}

// tokensOf reads d as tokens does.
func tokensOf(d *jsonstream.Decoder, split ...int) (out []string, errs []error) {
	d.SplitSizes = split
	names := []string{"EOF", "{", "}", "[", "]", "key", "str", "num", "true", "false", "null", "deep"}
	for {
		k, err := d.Next()
		if err != nil {
			errs = append(errs, err)
			d.SkipLine()
			continue
		}
		if k == jsonstream.EOF {
			return out, errs
		}
		s := names[k]
		switch k {
		case jsonstream.Key, jsonstream.String:
			t, _, err := d.Text(1 << 20)
			if err != nil {
				errs = append(errs, err)
				d.SkipLine()
				continue
			}
			s += ":" + string(t)
		case jsonstream.Number:
			s += ":" + string(d.Raw())
		}
		out = append(out, s)
	}
}

func TestTokensOfJSONLinesAndADocument(t *testing.T) {
	got, errs := tokens("{\"a\":[1,-2.5e3,true,null],\"b\":\"x\\\"y\\u00e9\\ud83d\\ude00\"}\n[]\n  {\n \"c\": {}\n}\n")
	want := "{ key:a [ num:1 num:-2.5e3 true null ] key:b str:x\"yé😀 } [ ] { key:c { } }"
	if strings.Join(got, " ") != want || errs != nil {
		t.Errorf("tokens %q, errors %v\nwant %q", strings.Join(got, " "), errs, want)
	}
}

func TestATornLineCostsItselfOnly(t *testing.T) {
	got, errs := tokens("{\n{\"a\":1}\n{\"b\":\n[1,2}\n{\"c\":3}\n")
	if len(errs) != 2 || !strings.Contains(strings.Join(got, " "), "key:c num:3 }") {
		t.Errorf("tokens %v, errors %v", got, errs)
	}
	var se *jsonstream.SyntaxError
	if len(errs) == 0 || !errors.As(errs[0], &se) || se.Line != 2 {
		t.Errorf("errors %v, want the first on line 2", errs)
	}
}

func TestAByteOrderMarkAtALineStartIsSpace(t *testing.T) {
	got, errs := tokens("\ufeff{\"a\":1}\n\ufeff{\"b\":2}\n")
	if strings.Join(got, " ") != "{ key:a num:1 } { key:b num:2 }" || errs != nil {
		t.Errorf("tokens %v, errors %v", got, errs)
	}
}

func TestAValueTooDeepIsSkippedWhole(t *testing.T) {
	deep := strings.Repeat("[", 1000) + `"]"` + strings.Repeat("]", 1000)
	got, errs := tokens(`{"a":` + deep + `,"b":1}` + "\n")
	want := "{ key:a " + strings.Repeat("[ ", jsonstream.MaxDepth-1) + "deep " + strings.Repeat("] ", jsonstream.MaxDepth-1) + "key:b num:1 }"
	if strings.Join(got, " ") != want || errs != nil {
		t.Errorf("tokens %v, errors %v", got, errs)
	}
}

func TestANewlineWhereAWriterSplitALineJoinsIt(t *testing.T) {
	line := `{"a":"` + strings.Repeat("x", 30)
	in := line[:16] + "\n" + line[16:] + `"}` + "\n"
	if got, errs := tokens(in, 16); errs != nil || len(got) < 3 || got[2] != "str:"+strings.Repeat("x", 30) {
		t.Errorf("split at 16: %v, %v", got, errs)
	}
	if _, errs := tokens(in); len(errs) == 0 {
		t.Errorf("no split sizes: no error")
	}
}

func TestTextKeepsACappedPrefixAndTheSumOfTheWhole(t *testing.T) {
	d := jsonstream.NewDecoder(strings.NewReader(`["` + strings.Repeat("é", 100) + `","` + strings.Repeat("é", 99) + `ê"]`))
	d.Next()
	var sums [][32]byte
	for range 2 {
		d.Next()
		b, more, sum, err := d.TextSum(10)
		if err != nil || !more || string(b) != strings.Repeat("é", 5) {
			t.Fatalf("%q, %v, %v", b, more, err)
		}
		sums = append(sums, sum)
	}
	if sums[0] == sums[1] {
		t.Error("two long values with one prefix have one sum")
	}
}

func TestStreamReadsAStringAsAStreamOfItsOwn(t *testing.T) {
	inner := `{"schemaVersion":"1","runId":"r\u00e9"}`
	b, _ := json.Marshal(map[string]string{"log": inner + "\n"})
	d := jsonstream.NewDecoder(strings.NewReader(string(b) + `{"z":1}`))
	d.Next()
	d.Next()
	d.Text(8)
	d.Next()
	got, err := io.ReadAll(d.Stream())
	if err != nil || string(got) != inner+"\n" {
		t.Fatalf("stream %q, %v", got, err)
	}
	if k, _ := d.Next(); k != jsonstream.ObjectEnd {
		t.Errorf("after the stream: %v", k)
	}
	if k, _ := d.Next(); k != jsonstream.ObjectStart {
		t.Errorf("the next value: %v", k)
	}
}

// longNumber is a number past the 256 bytes the Decoder keeps.
var longNumber = regexp.MustCompile(`[-+.0-9eE]{257}`)

// FuzzDecoder: no input panics or hangs, and valid JSON but for a long
// number reads without an error.
func FuzzDecoder(f *testing.F) {
	f.Add([]byte(`{"a":[1,"x\u00e9",{"b":null}]}` + "\n[true]"))
	f.Add([]byte("{\n{\"schemaVersion\":\"1\"}\n"))
	for _, l := range tracetest.Stderr(tracetest.SmallFleet()[19]) {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, errs := tokens(string(in))
		if json.Valid(in) && errs != nil && !longNumber.Match(in) {
			t.Fatalf("valid JSON %q: %v", in, errs)
		}
		// Read a byte at a time, through the smallest buffer: the same.
		slow, slowErrs := tokensOf(jsonstream.NewDecoderSize(iotest.OneByteReader(strings.NewReader(string(in))), 4096))
		if fmt.Sprint(out) != fmt.Sprint(slow) || len(errs) != len(slowErrs) {
			t.Fatalf("%q: read at once %v %v, a byte at a time %v %v", in, out, errs, slow, slowErrs)
		}
	})
}

// FuzzStream: a string read as a stream is the string JSON decodes, read
// a byte at a time into reads as small as a rune.
func FuzzStream(f *testing.F) {
	f.Add(`{"runId":"r\u00e9","value":"cuda>=12.4 \\ a/b"}`, uint8(0))
	f.Add("\"\"\\\xff\u2028\t\"", uint8(3))
	f.Fuzz(func(t *testing.T, s string, size uint8) {
		enc, _ := json.Marshal(s)
		var want string
		json.Unmarshal(enc, &want)
		d := jsonstream.NewDecoderSize(iotest.OneByteReader(strings.NewReader(string(enc))), 4096)
		if k, err := d.Next(); k != jsonstream.String || err != nil {
			t.Fatalf("%s: %v %v", enc, k, err)
		}
		got, err := io.ReadAll(smallReads{d.Stream(), utf8.UTFMax + int(size)})
		if err != nil || string(got) != want {
			t.Fatalf("%s: stream %q, %v; want %q", enc, got, err, want)
		}
	})
}

type smallReads struct {
	r    io.Reader
	size int
}

func (s smallReads) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), s.size)]) }

// BenchmarkStream reads a record held in an escaped JSON string, the way
// Loki's jsonl carries a provenance line.
func BenchmarkStream(b *testing.B) {
	record := `{"level":"info","record":{"schemaVersion":"1","runId":"350ca8af00000000350ca8af00000000","host":{"hostname":"gpu-node-0000","driver":{"version":"535.161.08","cudaVersion":"12.2"}},"image":{"requirements":[{"var":"NVIDIA_REQUIRE_CUDA","value":"cuda>=12.4 brand=tesla,driver>=535,driver<536"}]},"note":"ünïcode\ttab"}}`
	line, _ := json.Marshal(map[string]string{"line": strings.Repeat(record, 20)})
	buf := make([]byte, 64<<10)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		d := jsonstream.NewBytesDecoder(line)
		d.Next()
		d.Next()
		if k, _ := d.Next(); k != jsonstream.String {
			b.Fatal(k)
		}
		r := d.Stream()
		for {
			if _, err := r.Read(buf); err != nil {
				break
			}
		}
	}
}
