package fatbin

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"testing"
)

func TestLZ4Prefix(t *testing.T) {
	long := bytes.Repeat([]byte("x"), 300)
	tests := []struct {
		name  string
		src   []byte
		limit int
		want  string
	}{
		// token 0x44: 4 literals, then a match of 4+4 bytes at offset 4.
		{"LiteralsThenOverlappingMatch", []byte("\x44abcd\x04\x00\x10z"), 100, "abcdabcdabcdz"},
		{"StopsAtLimit", []byte("\x44abcd\x04\x00\x10z"), 6, "abcdab"},
		// 15 + 255 + 30 = 300 literals.
		{"ExtendedLiteralLength", append([]byte{0xf0, 255, 30}, long...), 1000, string(long)},
		// A prefix of a block: decoding stops at the cut sequence.
		{"CutBlock", []byte("\x44abcd\x04"), 100, "abcd"},
		{"OffsetBeforeStart", []byte("\x44abcd\x09\x00"), 100, "abcd"},
		{"ZeroOffset", []byte("\x44abcd\x00\x00"), 100, "abcd"},
		{"Empty", nil, 100, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(lz4Prefix(tt.src, tt.limit)); got != tt.want {
				t.Errorf("lz4Prefix = %q, want %q", got, tt.want)
			}
		})
	}
}

// realLZ4Payloads returns the LZ4-compressed payloads of a real fixture
// (nvcc 11.8, -Xfatbin -compress-all) with their decompressed sizes.
func realLZ4Payloads(tb testing.TB) (payloads [][]byte, sizes []int) {
	tb.Helper()
	f, err := elf.Open("testdata/nvcc/compressed.so")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	data, err := f.Section(SectionName).Data()
	if err != nil {
		tb.Fatal(err)
	}
	le := binary.LittleEndian
	for off := 0; off+containerHeaderLen <= len(data); {
		end := off + int(le.Uint16(data[off+6:])) + int(le.Uint64(data[off+8:]))
		for pos := off + containerHeaderLen; pos+entryHeaderMin <= end; {
			h := data[pos:]
			hs, ps := int(le.Uint32(h[offHeaderSize:])), int(le.Uint64(h[offPayloadSize:]))
			if le.Uint64(h[offFlags:])&flagLZ4 != 0 {
				payloads = append(payloads, data[pos+hs:pos+hs+ps])
				sizes = append(sizes, int(le.Uint64(h[offDecompressed:])))
			}
			pos += hs + ps
		}
		off = end
	}
	if len(payloads) == 0 {
		tb.Fatal("compressed.so has no LZ4 payload")
	}
	return payloads, sizes
}

// Every compressed payload nvcc wrote decompresses to its stated size, and
// the cubins among them to a CUDA ELF header.
func TestLZ4PrefixOnRealPayloads(t *testing.T) {
	payloads, sizes := realLZ4Payloads(t)
	for i, p := range payloads {
		out := lz4Prefix(p, sizes[i])
		if len(out) != sizes[i] {
			t.Errorf("payload %d: decompressed %d bytes, want %d", i, len(out), sizes[i])
		}
		if bytes.HasPrefix(out, []byte("\x7fELF")) {
			if _, ok := cubinSuffix(0, out); !ok {
				t.Errorf("payload %d: not a CUDA ELF header after decompressing", i)
			}
		} else if !bytes.Contains(out, []byte(".target sm_")) {
			t.Errorf("payload %d: neither a cubin nor PTX after decompressing: %q", i, out[:min(len(out), 80)])
		}
	}
}

// lz4Prefix never returns more than its limit, on any input.
func FuzzLZ4Prefix(f *testing.F) {
	payloads, _ := realLZ4Payloads(f)
	for _, p := range payloads {
		f.Add(p, 1024)
	}
	f.Add([]byte("\x44abcd\x04\x00\x10z"), 7)
	f.Add([]byte{0xff, 255, 255, 255, 0, 1, 0, 255, 255}, 1<<16)
	f.Fuzz(func(t *testing.T, src []byte, limit int) {
		limit = max(0, limit%(1<<20))
		if out := lz4Prefix(src, limit); len(out) > limit {
			t.Fatalf("lz4Prefix gave %d bytes, limit %d", len(out), limit)
		}
	})
}
