package fatbin_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fatbin"
	ft "github.com/gpu-preflight/gpu-preflight/preflight/fatbin/fatbintest"
	"github.com/gpu-preflight/gpu-preflight/preflight/gpuarch"
)

// fuzzSeeds are whole synthetic shared objects and bare .nv_fatbin contents.
func fuzzSeeds(f *testing.F) [][]byte {
	f.Helper()
	var seeds [][]byte
	for _, so := range []ft.SO{
		{Fatbin: ft.Containers([]ft.Entry{cubin(80), ptx(80, 7, 8)})},
		{Fatbin: ft.Containers([]ft.Entry{{Kind: ft.Cubin, SM: 90, Accel: true}, {Kind: ft.Cubin, SM: 100, ABI: 8, Accel: true}}, []ft.Entry{{Kind: ft.PTX, SM: 90, Accel: true}}),
			RelFatbin: ft.Containers([]ft.Entry{ptx(70, 7, 0)})},
		{Fatbin: []ft.Container{{BadMagic: true, Entries: []ft.Entry{cubin(70)}}, {Pad: 8, Entries: []ft.Entry{cubin(86)}}, {}}},
		{Fatbin: ft.Containers([]ft.Entry{{Kind: ft.Cubin, SM: 80, PayloadSizeField: 1 << 62}})},
		{Fatbin: ft.Containers([]ft.Entry{{Kind: ft.Cubin, SM: 80, HeaderSizeField: 1 << 31}, {Kind: ft.NVVM, SM: 80}})},
		{Fatbin: []ft.Container{{FatSize: 1<<64 - 1, Entries: []ft.Entry{cubin(80), {Kind: ft.Cubin, SM: 90, Compression: ft.ZSTD}}}}},
	} {
		b, err := so.Bytes()
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, b)
		sec, err := elf.NewFile(bytes.NewReader(b))
		if err != nil {
			f.Fatal(err)
		}
		data, err := sec.Section(".nv_fatbin").Data()
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, data)
	}
	// The nvcc .fatbin.c worked example (fatbintest.WorkedExampleContainer),
	// and corrupt variants of it.
	ex := ft.WorkedExampleContainer()
	seeds = append(seeds, ex)
	for _, mutate := range []func(b []byte){
		func(b []byte) { b[0] ^= 0xff },                                         // bad magic
		func(b []byte) { binary.LittleEndian.PutUint64(b[8:], 0x7fffffff0) },    // fatSize past the end
		func(b []byte) { binary.LittleEndian.PutUint32(b[0x14:], 0) },           // entry header size 0
		func(b []byte) { binary.LittleEndian.PutUint64(b[0x18:], 1<<63) },       // payload size absurd
		func(b []byte) { binary.LittleEndian.PutUint16(b[6:], 0xfff8) },         // container header size absurd
		func(b []byte) { binary.LittleEndian.PutUint32(b[0x10+0x1c:], 0) },      // arch 0
		func(b []byte) { binary.LittleEndian.PutUint64(b[0x10+0x28:], 0xa011) }, // both compression bits
	} {
		b := slices.Clone(ex)
		mutate(b)
		seeds = append(seeds, b)
	}
	seeds = append(seeds, ex[:0x30], ex[:0x10], ex[:7], nil, bytes.Repeat(ex[:8], 64))
	// Cubins whose section headers tell code from none (nocode_test.go):
	// uncompressed past the probe bound, LZ4 within it.
	seeds = append(seeds, entryOf(2, cubinWith(80<<10, ".nv.constant3", ".text.k"), false),
		entryOf(2, cubinWith(2000, ".debug_info"), true))
	// Real libraries nvcc built (testdata/nvcc): stubs, LZ4 cubins and PTX,
	// 'a' flags, several fatbins.
	for _, name := range []string{"mix.so", "compressed.so", "compressed90a.so", "split.so"} {
		b, err := os.ReadFile(filepath.Join(nvccDir, name))
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	return seeds
}

// FuzzScan feeds the input to Scan twice: as a whole ELF file (when
// debug/elf accepts it) and as the contents of a .nv_fatbin section. As a
// whole file it also goes through ScanFile, which reads sections with
// elfbound, not debug/elf: where debug/elf accepts the file, both find the
// same images.
func FuzzScan(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	file := filepath.Join(f.TempDir(), "lib.so")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		fromFile, fileErr := fatbin.ScanFile(file)
		if fileErr == nil {
			checkResult(t, fromFile)
		}
		if ef, err := elf.NewFile(bytes.NewReader(data)); err == nil {
			if r, err := fatbin.Scan(ef); err == nil {
				checkResult(t, r)
				if fileErr == nil && !reflect.DeepEqual(r.Images, fromFile.Images) {
					t.Fatalf("ScanFile found %v, Scan through debug/elf %v", fromFile.Images, r.Images)
				}
			}
		}
		wrapped, err := ft.ELF(ft.Section{Name: ".nv_fatbin", Flags: elf.SHF_ALLOC, Data: data})
		if err != nil {
			t.Fatal(err)
		}
		ef, err := elf.NewFile(bytes.NewReader(wrapped))
		if err != nil {
			t.Fatalf("debug/elf rejects a wrapped section: %v", err)
		}
		r, err := fatbin.Scan(ef)
		if err != nil {
			t.Fatalf("Scan of an in-memory section: %v", err)
		}
		checkResult(t, r)
		if r.Containers > len(data)/16 {
			t.Fatalf("%d containers in %d bytes", r.Containers, len(data))
		}
	})
}

// checkResult checks what must hold of any Result.
func checkResult(t *testing.T, r fatbin.Result) {
	t.Helper()
	total := 0
	for i, img := range r.Images {
		if img.Count < 1 || (img.Kind != "cubin" && img.Kind != "ptx") {
			t.Fatalf("bad image %+v", img)
		}
		if _, err := gpuarch.Parse(img.Arch); err != nil {
			t.Fatalf("image arch %q does not parse: %v", img.Arch, err)
		}
		if i > 0 && r.Images[i-1] == img {
			t.Fatalf("duplicate image %+v", img)
		}
		total += img.Count
	}
	if total > len(r.Entries) {
		t.Fatalf("%d images counted from %d entries", total, len(r.Entries))
	}
	if len(r.Warnings) > 33 {
		t.Fatalf("%d warnings, want at most 33", len(r.Warnings))
	}
	sorted := slices.IsSortedFunc(r.Images, func(a, b facts.KernelImage) int {
		pa, _ := gpuarch.Parse(a.Arch)
		pb, _ := gpuarch.Parse(b.Arch)
		if a.Kind != b.Kind {
			if a.Kind < b.Kind {
				return -1
			}
			return 1
		}
		if c := pa.SM() - pb.SM(); c != 0 {
			return c
		}
		return int(pa.Suffix) - int(pb.Suffix)
	})
	if !sorted {
		t.Fatalf("images not sorted: %+v", r.Images)
	}
}
