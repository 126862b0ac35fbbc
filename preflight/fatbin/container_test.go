package fatbin_test

import (
	"encoding/binary"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/fatbin"
	ft "github.com/gpu-preflight/gpu-preflight/preflight/fatbin/fatbintest"
)

// The container picked is the smallest one that carries every target of
// the library, so that loading it succeeds exactly when some code in the
// library runs on the GPU.
func TestPickContainerTakesTheSmallestWithEveryTarget(t *testing.T) {
	big := ft.Entry{Kind: ft.Cubin, SM: 80, PayloadSize: 4096}
	for _, tc := range []struct {
		name       string
		containers [][]ft.Entry
		want       int // index of the container expected
		targets    string
	}{
		{"one container", [][]ft.Entry{{cubin(80), cubin(90)}}, 0, "sm_80 sm_90"},
		{"the smaller of two alike", [][]ft.Entry{{big, cubin(90)}, {cubin(80), cubin(90)}}, 1, "sm_80 sm_90"},
		{"the one with every target, though larger", [][]ft.Entry{{cubin(80)}, {big, cubin(90), ptx(90, 8, 4)}}, 1, "compute_90 sm_80 sm_90"},
		{"no container has all: the one with most", [][]ft.Entry{{cubin(70)}, {cubin(80), cubin(90)}, {ptx(90, 8, 4)}}, 1, "sm_80 sm_90"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := scanBytes(t, soBytes(t, ft.SO{Fatbin: ft.Containers(tc.containers...)}))
			c, ok := fatbin.PickContainer(r)
			if !ok {
				t.Fatal("no container picked")
			}
			var offsets []int64
			for _, e := range r.Entries {
				if len(offsets) == 0 || offsets[len(offsets)-1] != e.Container {
					offsets = append(offsets, e.Container)
				}
			}
			if c.Offset != offsets[tc.want] || c.Section != ".nv_fatbin" {
				t.Errorf("picked %s offset %d, want container %d at offset %d (offsets %v)", c.Section, c.Offset, tc.want, offsets[tc.want], offsets)
			}
			if got := strings.Join(c.Targets, " "); got != tc.targets {
				t.Errorf("targets %q, want %q", got, tc.targets)
			}
		})
	}
}

func TestPickContainerNeedsALoadableEntry(t *testing.T) {
	r := scanBytes(t, soBytes(t, ft.SO{Fatbin: ft.Containers([]ft.Entry{{Kind: ft.NVVM, SM: 80}})}))
	if c, ok := fatbin.PickContainer(r); ok {
		t.Errorf("picked %+v from a library with no cubin or PTX", c)
	}
	if _, ok := fatbin.PickContainer(fatbin.Result{}); ok {
		t.Error("picked a container from an empty result")
	}
}

// ReadContainer returns the container as the driver takes it: the magic,
// its header and exactly its entries, not the next container.
func TestReadContainerReturnsOneWholeContainer(t *testing.T) {
	lib := filepath.Join(t.TempDir(), "libkernels.so")
	if err := ft.WriteSO(lib, []ft.Entry{cubin(70)}, []ft.Entry{cubin(80), ptx(80, 7, 0)}); err != nil {
		t.Fatal(err)
	}
	r, err := fatbin.ScanFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := fatbin.PickContainer(r)
	if !ok || c.Offset == 0 {
		t.Fatalf("picked %+v, want the second container", c)
	}
	b, err := fatbin.ReadContainer(lib, c.Section, c.Offset, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if magic := binary.LittleEndian.Uint32(b); magic != 0xBA55ED50 {
		t.Errorf("magic 0x%08x", magic)
	}
	if want := 16 + c.Bytes; int64(len(b)) != want {
		t.Errorf("read %d bytes, want the 16-byte header and %d bytes of entries", len(b), c.Bytes)
	}
	// The bytes read are a container the scanner reads back alike.
	again := scanBytes(t, soBytes(t, ft.SO{Extra: []ft.Section{{Name: ".nv_fatbin", Data: b}}}))
	var got []string
	for _, img := range again.Images {
		got = append(got, img.Arch)
	}
	if !reflect.DeepEqual(got, []string{"sm_80", "compute_80"}) && !reflect.DeepEqual(got, []string{"compute_80", "sm_80"}) {
		t.Errorf("re-scanned container holds %v, want sm_80 and compute_80", got)
	}

	if _, err := fatbin.ReadContainer(lib, c.Section, c.Offset, 64); err == nil || !strings.Contains(err.Error(), "more than 64") {
		t.Errorf("a container over the limit: %v, want a refusal", err)
	}
	if _, err := fatbin.ReadContainer(lib, c.Section, c.Offset+8, 1<<20); err == nil || !strings.Contains(err.Error(), "no container") {
		t.Errorf("an offset without a container: %v", err)
	}
	if _, err := fatbin.ReadContainer(lib, "__nv_relfatbin", 0, 1<<20); err == nil {
		t.Error("a missing section read without error")
	}
}
