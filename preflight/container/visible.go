package container

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/internal/truncate"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// VisibleGPUs returns the GPUs the training process will see: gpus (bus
// order) narrowed by NVIDIA_VISIBLE_DEVICES, then CUDA_VISIBLE_DEVICES, and
// a note on any guess it made. env is facts.Container.Env.
//
// NVIDIA_VISIBLE_DEVICES (NVIDIA Container Toolkit): "none"/"void" none;
// unset, "" or "all" every GPU; UUIDs (case-insensitive); host indices, which
// the runtime injects alone, so a container that sees as many GPUs as listed
// sees exactly those; MIG devices keep every GPU (procfs cannot tell parents).
//
// CUDA_VISIBLE_DEVICES as the CUDA driver reads it (CUDA Programming Guide;
// PyTorch's torch/cuda/__init__.py _parse_visible_devices mirrors it): ""
// hides all; the first entry sets the kind (UUID prefixes, MIG-, ordinals
// read like strtoul); the first invalid entry ends the list; a GPU listed
// twice hides all. A value of MaxEnvValueBytes or more is not applied.
func VisibleGPUs(gpus []facts.GPU, env map[string]string) (visible []facts.GPU, note string) {
	var notes []string
	visible = slices.Clone(gpus)
	if v, ok := env["NVIDIA_VISIBLE_DEVICES"]; ok {
		var n string
		if n = tooLong("NVIDIA_VISIBLE_DEVICES", v, len(visible)); n == "" {
			visible, n = nvidiaVisible(visible, v)
		}
		notes = appendNote(notes, n)
	}
	if v, ok := env["CUDA_VISIBLE_DEVICES"]; ok {
		var n string
		if n = tooLong("CUDA_VISIBLE_DEVICES", v, len(visible)); n == "" {
			visible, n = cudaVisible(visible, v, env["CUDA_DEVICE_ORDER"])
		}
		notes = appendNote(notes, n)
	}
	return visible, strings.Join(notes, "; ")
}

// MaxEnvValueBytes is execve's MAX_ARG_STRLEN: a longer list cannot be real.
const MaxEnvValueBytes = facts.MaxEnvString

func tooLong(name, v string, seen int) string {
	if len(v) < MaxEnvValueBytes {
		return ""
	}
	return fmt.Sprintf("%s is %d bytes, over the %d-byte limit of one environment string (MAX_ARG_STRLEN): not applied, keeping the %d GPUs seen",
		name, len(v), MaxEnvValueBytes, seen)
}

func appendNote(notes []string, n string) []string {
	if n != "" {
		notes = append(notes, n)
	}
	return notes
}

func nvidiaVisible(gpus []facts.GPU, v string) ([]facts.GPU, string) {
	v = strings.TrimSpace(v)
	switch v {
	case "none", "void":
		return nil, ""
	case "", "all":
		return gpus, ""
	}
	var entries []string
	for e := range strings.SplitSeq(v, ",") {
		if e = strings.TrimSpace(e); e != "" {
			entries = append(entries, e)
		}
	}
	if len(entries) == 0 {
		return gpus, ""
	}
	indices := true
	for _, e := range entries {
		if strings.HasPrefix(e, "MIG-") || strings.Contains(e, ":") {
			return gpus, fmt.Sprintf("NVIDIA_VISIBLE_DEVICES=%s names MIG devices: keeping the %d GPUs seen, their parents", truncate.String(v, truncate.MessageBytes), len(gpus))
		}
		if !isDecimal(e) {
			indices = false
		}
	}
	if indices && len(entries) == len(gpus) {
		return gpus, ""
	}
	// key makes "01" and "1", "GPU-AB" and "gpu-ab" the same entry.
	key := func(e string) string {
		if isDecimal(e) {
			return strconv.Itoa(strtoul(e))
		}
		return strings.ToLower(e)
	}
	want := map[string]bool{}
	for _, e := range entries {
		want[key(e)] = true
	}
	var out []facts.GPU
	matched := map[string]bool{}
	for _, g := range gpus {
		idx, uuid := strconv.Itoa(g.Index), strings.ToLower(g.UUID)
		switch {
		case want[idx]:
			matched[idx] = true
		case uuid != "" && want[uuid]:
			matched[uuid] = true
		default:
			continue
		}
		out = append(out, g)
	}
	var notes []string
	if indices {
		notes = append(notes, fmt.Sprintf("NVIDIA_VISIBLE_DEVICES=%s lists %d GPUs but %d are seen: applied as host indices", truncate.String(v, truncate.MessageBytes), len(entries), len(gpus)))
	}
	var unknown []string
	for _, e := range entries {
		if !matched[key(e)] {
			unknown = append(unknown, e)
		}
	}
	if len(unknown) > 0 {
		notes = append(notes, fmt.Sprintf("NVIDIA_VISIBLE_DEVICES names %s, not among the GPUs seen", truncate.String(strings.Join(unknown, ","), truncate.MessageBytes)))
	}
	return out, strings.Join(notes, "; ")
}

func cudaVisible(gpus []facts.GPU, v, order string) ([]facts.GPU, string) {
	if v == "" {
		return nil, ""
	}
	entries := strings.Split(v, ",")
	stopped := func(e, why string) string {
		return fmt.Sprintf("CUDA_VISIBLE_DEVICES=%s: entry %s %s; CUDA ignores it and the entries after it", truncate.String(v, truncate.MessageBytes), truncate.Quote(e, truncate.MessageBytes), why)
	}
	twice := func(e string) ([]facts.GPU, string) {
		return nil, fmt.Sprintf("CUDA_VISIBLE_DEVICES=%s lists %s twice: CUDA then sees no GPU", truncate.String(v, truncate.MessageBytes), truncate.Quote(e, truncate.MessageBytes))
	}
	var out []facts.GPU
	switch {
	case strings.HasPrefix(v, "GPU-"):
		seen := map[int]bool{}
		listed := map[string]bool{}
		for _, e := range entries {
			if !strings.HasPrefix(e, "GPU-") {
				return out, stopped(e, "is not a GPU UUID")
			}
			if listed[e] {
				return twice(e)
			}
			listed[e] = true
			j, why := uuidPrefix(gpus, e)
			if j < 0 {
				return out, stopped(e, why)
			}
			if seen[j] {
				return twice(e)
			}
			seen[j] = true
			out = append(out, gpus[j])
		}
		return out, ""

	case strings.HasPrefix(v, "MIG-"):
		seen := map[int]bool{}
		listed := map[string]bool{}
		var notes []string
		for _, e := range entries {
			if !strings.HasPrefix(e, "MIG-") {
				notes = append(notes, stopped(e, "is not a MIG device"))
				break
			}
			if listed[e] {
				return twice(e)
			}
			listed[e] = true
			// The old form MIG-GPU-<uuid>/<gi>/<ci> names its parent; the
			// current form MIG-<uuid> does not, and only NVML can map it.
			if parent, ok := strings.CutPrefix(e, "MIG-"); ok && strings.HasPrefix(parent, "GPU-") {
				parent, _, _ = strings.Cut(parent, "/")
				j, why := uuidPrefix(gpus, parent)
				if j < 0 {
					notes = append(notes, stopped(e, "has a parent GPU that "+why))
					break
				}
				if !seen[j] {
					seen[j] = true
					out = append(out, gpus[j])
				}
				continue
			}
			if len(gpus) == 1 {
				if !seen[0] {
					seen[0] = true
					out = append(out, gpus[0])
				}
				continue
			}
			notes = append(notes, fmt.Sprintf("CUDA_VISIBLE_DEVICES names MIG device %s, whose parent GPU procfs cannot tell: keeping the %d GPUs seen", truncate.String(e, truncate.MessageBytes), len(gpus)))
			return gpus, strings.Join(notes, "; ")
		}
		return out, strings.Join(notes, "; ")
	}

	var ordinals []int
	listed := map[int]bool{} // a map, not a scan of ordinals: lists can be long
	var notes []string
	for _, e := range entries {
		x := strtoul(strings.TrimSpace(e))
		if x >= 0 && listed[x] {
			return twice(e)
		}
		if x < 0 {
			notes = append(notes, stopped(e, "is not a device ordinal"))
			break
		}
		listed[x] = true
		ordinals = append(ordinals, x)
	}
	for _, x := range ordinals {
		if x >= len(gpus) {
			notes = append(notes, stopped(strconv.Itoa(x), fmt.Sprintf("is out of range (%d GPUs)", len(gpus))))
			break
		}
		out = append(out, gpus[x])
	}
	if order != "PCI_BUS_ID" && len(out) > 0 && mixedModels(gpus) {
		notes = append(notes, "GPUs of different models: CUDA numbers them fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID; ordinals were read in bus order")
	}
	return out, strings.Join(notes, "; ")
}

// uuidPrefix returns the index of the one GPU whose UUID starts with prefix
// (exactly, as CUDA compares; the driver prints lower case), or -1 and why.
func uuidPrefix(gpus []facts.GPU, prefix string) (int, string) {
	found := -1
	for i, g := range gpus {
		if g.UUID == "" || !strings.HasPrefix(g.UUID, prefix) {
			continue
		}
		if found >= 0 {
			return -1, "matches more than one GPU"
		}
		found = i
	}
	if found < 0 {
		return -1, "matches no GPU seen"
	}
	return found, ""
}

// strtoul reads a leading decimal as C's strtoul does ("1gpu2" is 1); no
// digits or a negative number is -1, and too large saturates.
func strtoul(s string) int {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	start := i
	n := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if n < 1e8 { // past this it is out of range anyway; keep it in an int32
			n = n*10 + int(s[i]-'0')
		}
	}
	if i == start || (neg && n != 0) {
		return -1
	}
	return n
}

func isDecimal(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func mixedModels(gpus []facts.GPU) bool {
	for _, g := range gpus {
		if g.Name != gpus[0].Name {
			return true
		}
	}
	return false
}
