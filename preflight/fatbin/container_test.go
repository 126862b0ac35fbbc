package fatbin_test

import (
	"encoding/binary"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/fatbin"
	ft "github.com/gpu-preflight/gpu-preflight/preflight/fatbin/fatbintest"
)

// containerIndex maps a picked container back to its index in the file.
func containerIndex(t *testing.T, r fatbin.Result, c fatbin.Container) int {
	t.Helper()
	for _, e := range r.Entries {
		if e.ContainerOffset == c.Offset {
			return e.Container
		}
	}
	t.Fatalf("no entry in a container at offset %d", c.Offset)
	return -1
}

// One container per distinct set of targets, the smallest of each, the
// sets most containers carry first: loading them proves what every
// kernel of the library does on a GPU, since the runtime picks one image
// per container.
func TestPickContainersTakesTheSmallestOfEachTargetSet(t *testing.T) {
	big := ft.Entry{Kind: ft.Cubin, SM: 80, PayloadSize: 4096}
	for _, tc := range []struct {
		name       string
		containers [][]ft.Entry
		max        int
		want       []int    // container indexes, in order
		targets    []string // of each
		like       []int
	}{
		{"one container", [][]ft.Entry{{cubin(80), cubin(90)}}, 8, []int{0}, []string{"sm_80 sm_90"}, []int{1}},
		{"the smaller of two alike", [][]ft.Entry{{big, cubin(90)}, {cubin(80), cubin(90)}}, 8, []int{1}, []string{"sm_80 sm_90"}, []int{2}},
		{"each set, the commonest first", [][]ft.Entry{{cubin(70)}, {cubin(80), cubin(90)}, {big, cubin(90)}, {cubin(80), cubin(90)}}, 8,
			[]int{1, 0}, []string{"sm_80 sm_90", "sm_70"}, []int{3, 1}},
		{"at most max", [][]ft.Entry{{cubin(70)}, {cubin(80)}, {cubin(80)}, {ptx(90, 8, 4)}}, 1, []int{1}, []string{"sm_80"}, []int{2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := scanBytes(t, soBytes(t, ft.SO{Fatbin: ft.Containers(tc.containers...)}))
			got := fatbin.PickContainers(r, tc.max)
			if len(got) != len(tc.want) {
				t.Fatalf("picked %d containers %+v, want %d", len(got), got, len(tc.want))
			}
			for i, c := range got {
				if idx := containerIndex(t, r, c); idx != tc.want[i] || strings.Join(c.Targets, " ") != tc.targets[i] || c.Like != tc.like[i] {
					t.Errorf("pick %d: container %d, targets %v, like %d; want %d, %s, %d", i, idx, c.Targets, c.Like, tc.want[i], tc.targets[i], tc.like[i])
				}
			}
		})
	}
}

func TestPickContainersNeedsALoadableEntry(t *testing.T) {
	r := scanBytes(t, soBytes(t, ft.SO{Fatbin: ft.Containers([]ft.Entry{{Kind: ft.NVVM, SM: 80}})}))
	if got := fatbin.PickContainers(r, 8); len(got) != 0 {
		t.Errorf("picked %+v from a library with no cubin or PTX", got)
	}
	if got := fatbin.PickContainers(fatbin.Result{}, 8); len(got) != 0 {
		t.Errorf("picked %+v from an empty result", got)
	}
}

// ReadContainer returns the container as the driver takes it: the magic,
// its header and exactly its entries, not the next container.
func TestReadContainerReturnsOneWholeContainer(t *testing.T) {
	lib := filepath.Join(t.TempDir(), "libkernels.so")
	if err := ft.WriteSO(lib, []ft.Entry{cubin(70)}, []ft.Entry{cubin(80), ptx(80, 7, 0)}, []ft.Entry{cubin(80), ptx(80, 7, 0)}); err != nil {
		t.Fatal(err)
	}
	r, err := fatbin.ScanFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	picked := fatbin.PickContainers(r, 8)
	if len(picked) != 2 || picked[0].Offset == 0 {
		t.Fatalf("picked %+v, want the second container first", picked)
	}
	c := picked[0]
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
	if again.Containers != 1 || len(fatbin.PickContainers(again, 8)) != 1 || strings.Join(fatbin.PickContainers(again, 8)[0].Targets, " ") != "compute_80 sm_80" {
		t.Errorf("re-scanned container: %d containers, images %+v", again.Containers, again.Images)
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
