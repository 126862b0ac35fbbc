package container

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// fourGPUs is a host as procfs lists it, in bus order.
var fourGPUs = []facts.GPU{
	{Index: 0, Name: "NVIDIA A100-SXM4-80GB", UUID: "GPU-2d5e0c33-1b3d-6d0a-5d5f-9b5b8b7b1c2e", PCIBusID: "00000000:07:00.0"},
	{Index: 1, Name: "NVIDIA A100-SXM4-80GB", UUID: "GPU-2d5e9f00-0000-0000-0000-000000000001", PCIBusID: "00000000:0F:00.0"},
	{Index: 2, Name: "NVIDIA A100-SXM4-80GB", UUID: "GPU-8c1f0000-0000-0000-0000-000000000002", PCIBusID: "00000000:47:00.0"},
	{Index: 3, Name: "NVIDIA A100-SXM4-80GB", UUID: "GPU-f00d0000-0000-0000-0000-000000000003", PCIBusID: "00000000:4E:00.0"},
}

func indices(gpus []facts.GPU) []int {
	out := []int{}
	for _, g := range gpus {
		out = append(out, g.Index)
	}
	return out
}

func TestVisibleGPUs(t *testing.T) {
	mixed := []facts.GPU{
		{Index: 0, Name: "NVIDIA RTX A4000", UUID: "GPU-aaaa"},
		{Index: 1, Name: "NVIDIA A100-PCIE-40GB", UUID: "GPU-bbbb"},
	}
	for _, tc := range []struct {
		name string
		gpus []facts.GPU
		env  map[string]string
		want []int  // Index of each visible GPU, in order
		note string // a substring of the note; "" means no note
	}{
		// NVIDIA_VISIBLE_DEVICES
		{name: "unset shows all", env: map[string]string{}, want: []int{0, 1, 2, 3}},
		{name: "NVIDIA all shows all", env: map[string]string{"NVIDIA_VISIBLE_DEVICES": "all"}, want: []int{0, 1, 2, 3}},
		{name: "NVIDIA empty shows all", env: map[string]string{"NVIDIA_VISIBLE_DEVICES": ""}, want: []int{0, 1, 2, 3}},
		{name: "NVIDIA none shows none", env: map[string]string{"NVIDIA_VISIBLE_DEVICES": "none"}, want: []int{}},
		{name: "NVIDIA void shows none", env: map[string]string{"NVIDIA_VISIBLE_DEVICES": "void"}, want: []int{}},
		{
			name: "NVIDIA UUIDs match case-insensitively, in bus order",
			env:  map[string]string{"NVIDIA_VISIBLE_DEVICES": "GPU-F00D0000-0000-0000-0000-000000000003,GPU-2d5e0c33-1b3d-6d0a-5d5f-9b5b8b7b1c2e"},
			want: []int{0, 3},
		},
		{
			name: "NVIDIA unknown UUID is noted",
			env:  map[string]string{"NVIDIA_VISIBLE_DEVICES": "GPU-2d5e0c33-1b3d-6d0a-5d5f-9b5b8b7b1c2e,GPU-deadbeef"},
			want: []int{0}, note: "GPU-deadbeef, not among",
		},
		{
			name: "NVIDIA indices equal in number to the GPUs seen take all",
			gpus: fourGPUs[:2], // the runtime injected host GPUs 2 and 3, renumbered
			env:  map[string]string{"NVIDIA_VISIBLE_DEVICES": "2,3"},
			want: []int{0, 1},
		},
		{
			name: "NVIDIA indices otherwise filter by index, with a note",
			env:  map[string]string{"NVIDIA_VISIBLE_DEVICES": "1, 03"},
			want: []int{1, 3}, note: "applied as host indices",
		},
		{
			name: "NVIDIA MIG devices keep every GPU seen, with a note",
			env:  map[string]string{"NVIDIA_VISIBLE_DEVICES": "MIG-1b2c3d4e-0000-0000-0000-000000000000"},
			want: []int{0, 1, 2, 3}, note: "MIG",
		},
		{
			name: "NVIDIA MIG index form keeps every GPU seen",
			env:  map[string]string{"NVIDIA_VISIBLE_DEVICES": "0:1,1:0"},
			want: []int{0, 1, 2, 3}, note: "MIG",
		},

		// CUDA_VISIBLE_DEVICES
		{name: "CUDA empty shows none", env: map[string]string{"CUDA_VISIBLE_DEVICES": ""}, want: []int{}},
		{name: "CUDA ordinals select and reorder", env: map[string]string{"CUDA_VISIBLE_DEVICES": "2,0"}, want: []int{2, 0}},
		{name: "CUDA ordinals read like strtoul", env: map[string]string{"CUDA_VISIBLE_DEVICES": " 1gpu, +3"}, want: []int{1, 3}},
		{
			name: "CUDA enumeration stops at a negative ordinal",
			env:  map[string]string{"CUDA_VISIBLE_DEVICES": "0,2,-1,1"},
			want: []int{0, 2}, note: `entry "-1"`,
		},
		{
			name: "CUDA enumeration stops at an out-of-range ordinal",
			env:  map[string]string{"CUDA_VISIBLE_DEVICES": "1,7,2"},
			want: []int{1}, note: "out of range (4 GPUs)",
		},
		{
			name: "CUDA enumeration stops at a non-number",
			env:  map[string]string{"CUDA_VISIBLE_DEVICES": "1,gpu2"},
			want: []int{1}, note: `entry "gpu2"`,
		},
		{
			name: "CUDA repeated ordinal hides every GPU",
			env:  map[string]string{"CUDA_VISIBLE_DEVICES": "1,2,1"},
			want: []int{}, note: "twice",
		},
		{
			name: "CUDA ordinals index the NVIDIA-filtered list",
			env:  map[string]string{"NVIDIA_VISIBLE_DEVICES": "GPU-8c1f0000-0000-0000-0000-000000000002,GPU-f00d0000-0000-0000-0000-000000000003", "CUDA_VISIBLE_DEVICES": "1"},
			want: []int{3},
		},
		{
			name: "CUDA after NVIDIA none sees nothing",
			env:  map[string]string{"NVIDIA_VISIBLE_DEVICES": "none", "CUDA_VISIBLE_DEVICES": "0"},
			want: []int{}, note: "out of range (0 GPUs)",
		},
		{
			name: "CUDA UUID unique prefix matches",
			env:  map[string]string{"CUDA_VISIBLE_DEVICES": "GPU-f00d,GPU-2d5e0"},
			want: []int{3, 0},
		},
		{
			name: "CUDA ambiguous UUID prefix stops enumeration",
			env:  map[string]string{"CUDA_VISIBLE_DEVICES": "GPU-8c1f,GPU-2d5e,GPU-f00d"},
			want: []int{2}, note: "more than one GPU",
		},
		{
			name: "CUDA unknown UUID stops enumeration",
			env:  map[string]string{"CUDA_VISIBLE_DEVICES": "GPU-8c1f,GPU-0000,GPU-f00d"},
			want: []int{2}, note: "matches no GPU",
		},
		{
			name: "CUDA UUID list stops at an ordinal",
			env:  map[string]string{"CUDA_VISIBLE_DEVICES": "GPU-8c1f,1"},
			want: []int{2}, note: "is not a GPU UUID",
		},
		{
			name: "CUDA UUID prefixes naming one GPU twice hide every GPU",
			env:  map[string]string{"CUDA_VISIBLE_DEVICES": "GPU-f00d,GPU-f00d0000"},
			want: []int{}, note: "twice",
		},
		{
			name: "CUDA UUIDs compare case-sensitively",
			env:  map[string]string{"CUDA_VISIBLE_DEVICES": "GPU-F00D"},
			want: []int{}, note: "matches no GPU",
		},
		{
			name: "CUDA MIG old form keeps its parent",
			env:  map[string]string{"CUDA_VISIBLE_DEVICES": "MIG-GPU-8c1f0000-0000-0000-0000-000000000002/1/0,MIG-GPU-8c1f0000-0000-0000-0000-000000000002/2/0"},
			want: []int{2},
		},
		{
			name: "CUDA MIG with unknown parent keeps every GPU, with a note",
			env:  map[string]string{"CUDA_VISIBLE_DEVICES": "MIG-1b2c3d4e-0000-0000-0000-000000000000"},
			want: []int{0, 1, 2, 3}, note: "parent GPU procfs cannot tell",
		},
		{
			name: "CUDA MIG with a single GPU keeps that parent",
			gpus: fourGPUs[2:3],
			env:  map[string]string{"CUDA_VISIBLE_DEVICES": "MIG-1b2c3d4e-0000-0000-0000-000000000000"},
			want: []int{2},
		},
		{
			name: "CUDA ordinals on mixed models note the fastest-first order",
			gpus: mixed,
			env:  map[string]string{"CUDA_VISIBLE_DEVICES": "0"},
			want: []int{0}, note: "CUDA_DEVICE_ORDER=PCI_BUS_ID",
		},
		{
			name: "CUDA_DEVICE_ORDER=PCI_BUS_ID needs no note",
			gpus: mixed,
			env:  map[string]string{"CUDA_VISIBLE_DEVICES": "1", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"},
			want: []int{1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gpus := tc.gpus
			if gpus == nil {
				gpus = fourGPUs
			}
			before := slices.Clone(gpus)
			got, note := VisibleGPUs(gpus, tc.env)
			if !slices.Equal(indices(got), tc.want) {
				t.Errorf("visible = %v, want %v (note %q)", indices(got), tc.want, note)
			}
			if (tc.note == "") != (note == "") || !strings.Contains(note, tc.note) {
				t.Errorf("note = %q, want one containing %q", note, tc.note)
			}
			if !slices.EqualFunc(gpus, before, func(a, b facts.GPU) bool { return a.Index == b.Index && a.UUID == b.UUID }) {
				t.Error("VisibleGPUs modified its input")
			}
		})
	}
}

func TestStrtoulLikeC(t *testing.T) {
	for in, want := range map[string]int{
		"0": 0, "12": 12, "+3": 3, "-0": 0, "-1": -1, "": -1, "x1": -1, "1x": 1, "+": -1,
		"99999999999999999999": 999999999, // saturated: out of range either way
	} {
		if got := strtoul(in); got != want {
			t.Errorf("strtoul(%q) = %d, want %d", in, got, want)
		}
	}
}

// A value over MaxEnvValueBytes cannot have reached a real process: it is
// not applied, and the note names the variable, its size and the limit.
func TestVisibleGPUsOverMaxEnvValueBytesIsNotApplied(t *testing.T) {
	long := strings.Repeat("3,", 1<<19) // 1 MiB
	for _, name := range []string{"NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"} {
		got, note := VisibleGPUs(fourGPUs, map[string]string{name: long})
		if !slices.Equal(indices(got), []int{0, 1, 2, 3}) {
			t.Errorf("%s of 1 MiB: visible %v, want every GPU seen", name, indices(got))
		}
		for _, want := range []string{name + " is 1048576 bytes", "131072-byte limit", "MAX_ARG_STRLEN", "not applied"} {
			if !strings.Contains(note, want) {
				t.Errorf("%s of 1 MiB: note %q does not say %q", name, note, want)
			}
		}
		if len(note) > 300 {
			t.Errorf("note is %d bytes: the value must not be copied into it", len(note))
		}
	}
}

// Just under the limit, a list of tens of thousands of entries is still
// read by CUDA's rules: the duplicate at its end hides every GPU.
func TestVisibleGPUsLongListUnderTheLimit(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < MaxEnvValueBytes-20; i++ {
		fmt.Fprintf(&b, "%d,", i)
	}
	b.WriteString("7")
	got, note := VisibleGPUs(fourGPUs, map[string]string{"CUDA_VISIBLE_DEVICES": b.String()})
	if len(got) != 0 || !strings.Contains(note, `lists "7" twice`) {
		t.Errorf("visible %v, note %.200q: want none, 7 listed twice", indices(got), note)
	}
}

func FuzzVisibleGPUs(f *testing.F) {
	f.Add("all", "0,1")
	f.Add("GPU-2d5e0c33-1b3d-6d0a-5d5f-9b5b8b7b1c2e,2", "GPU-2d5e")
	f.Add("1,3", "1,0,-1")
	f.Add("MIG-1b2c3d4e", "MIG-GPU-f00d/1/0,MIG-x")
	f.Add("none", "")
	f.Fuzz(func(t *testing.T, nvd, cvd string) {
		for _, env := range []map[string]string{
			{"NVIDIA_VISIBLE_DEVICES": nvd},
			{"CUDA_VISIBLE_DEVICES": cvd},
			{"NVIDIA_VISIBLE_DEVICES": nvd, "CUDA_VISIBLE_DEVICES": cvd},
		} {
			got, _ := VisibleGPUs(fourGPUs, env)
			seen := map[int]bool{}
			for _, g := range got {
				if seen[g.Index] {
					t.Fatalf("env %q: GPU %d visible twice", env, g.Index)
				}
				seen[g.Index] = true
				if g.Index < 0 || g.Index >= len(fourGPUs) || g.UUID != fourGPUs[g.Index].UUID {
					t.Fatalf("env %q: GPU %+v is not one of the host's", env, g)
				}
			}
		}
	})
}
