package check

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/compat"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fatbin"
	"github.com/gpu-preflight/gpu-preflight/preflight/version"
)

// GPUArch checks that every visible GPU can run the frameworks' kernels,
// and that its compute capability is one the image's CUDA toolkit supports.
// It predicts "no kernel image is available for execution on the device"
// (error 209) and "the provided PTX was compiled with an unsupported
// toolchain" (error 222) before the job starts.
//
// Rules (research/fatbin-frameworks.md section 2; NVIDIA's Ada, Hopper and
// Blackwell compatibility guides; LLVM offload's CUDA plugin):
//   - a cubin sm_XY runs on compute capability X.Z iff Z >= Y (same major);
//     sm_XYa only on exactly X.Y; sm_XYf like a plain cubin;
//   - PTX compute_XY runs on any capability >= X.Y through the driver's JIT,
//     if the driver's CUDA supports the PTX ISA version (compat.PTXISACUDA;
//     when a version file gives only the target, the ISA is taken to be the
//     framework CUDA's); compute_XYa only on exactly X.Y, compute_XYf on
//     X.Z with Z >= Y;
//   - a GPU passes when a cubin runs, warns when only PTX JIT does (slow
//     first launch), and errors when nothing runs;
//   - a capability below the image toolkit's range (compat.ToolkitArchs:
//     CUDA 13 has no Volta) is an error, above it a warning (the
//     toolkit's libraries reach it through PTX JIT at best).
//
// Each kernel library is judged alone: a framework fails on a GPU when any
// of its libraries has nothing for it. Without scanned kernels the targets
// the framework's version file records are used.
var GPUArch = Check{ID: "gpu-arch", Run: gpuArch}

func gpuArch(in Input) Finding {
	const id = "gpu-arch"
	if len(in.Visible) == 0 {
		return Finding{ID: id, Status: Skip, Message: "no visible GPU"}
	}
	groups := ccGroups(in.Visible)
	if len(groups) == 0 {
		return Finding{ID: id, Status: Skip, Message: "the visible GPUs' compute capability is unknown"}
	}
	var verdicts []frameworkVerdict
	for _, g := range groups {
		if v, ok := toolkitArchVerdict(in, g); ok {
			verdicts = append(verdicts, v)
		}
		for _, fw := range in.Facts.Container.Frameworks {
			if v, ok := frameworkArchVerdict(in, g, fw); ok {
				verdicts = append(verdicts, v)
			}
		}
	}
	if len(verdicts) == 0 {
		return Finding{ID: id, Status: Skip,
			Message: "no compiled GPU architectures known for the image (no framework kernels scanned, no CUDA toolkit version)"}
	}
	return combineVerdicts(id, verdicts)
}

// ccGroup is the visible GPUs of one model and compute capability.
type ccGroup struct {
	cc      fatbin.Arch // Major, Minor of the capability
	ccText  string      // "9.0"
	name    string
	indexes []int
}

// label is "GPU 0,1 (NVIDIA H100 80GB HBM3, compute capability 9.0)".
func (g ccGroup) label() string {
	idx := make([]string, len(g.indexes))
	for i, n := range g.indexes {
		idx[i] = strconv.Itoa(n)
	}
	name := g.name
	if name == "" {
		name = "unknown model"
	}
	return fmt.Sprintf("GPU %s (%s, compute capability %s)", strings.Join(idx, ","), name, g.ccText)
}

// ccGroups groups the visible GPUs with a known capability by model and
// capability, in the order they are visible.
func ccGroups(gpus []facts.GPU) []ccGroup {
	var out []ccGroup
	for _, gpu := range gpus {
		a, err := fatbin.ParseArch(gpu.ComputeCapability)
		if err != nil || a.Suffix != 0 || !strings.Contains(gpu.ComputeCapability, ".") {
			continue
		}
		found := false
		for i := range out {
			if out[i].cc == a && out[i].name == gpu.Name {
				out[i].indexes = append(out[i].indexes, gpu.Index)
				found = true
				break
			}
		}
		if !found {
			out = append(out, ccGroup{cc: a, ccText: fmt.Sprintf("%d.%d", a.Major, a.Minor), name: gpu.Name, indexes: []int{gpu.Index}})
		}
	}
	return out
}

// toolkitArchVerdict judges the GPU's capability against the image's CUDA
// toolkit's supported range.
func toolkitArchVerdict(in Input, g ccGroup) (frameworkVerdict, bool) {
	cuda := version.Prefix(in.Facts.Container.CUDA.Version, 2)
	min, max, ok := compat.ToolkitArchs(cuda)
	if !ok {
		return frameworkVerdict{}, false
	}
	switch {
	case version.Less(g.ccText, min):
		return frameworkVerdict{status: Error, message: fmt.Sprintf(
			"%s is older than the image's CUDA %s supports (compute capability %s to %s): its libraries carry no kernels for it",
			g.label(), cuda, min, max),
			remedy: fmt.Sprintf("use an image built on an older CUDA toolkit that supports compute capability %s, or run on a newer GPU", g.ccText)}, true
	case version.Less(max, g.ccText):
		return frameworkVerdict{status: Warn, message: fmt.Sprintf(
			"%s is newer than the image's CUDA %s supports (compute capability %s to %s): its libraries can reach it only through PTX JIT, if they carry PTX",
			g.label(), cuda, min, max),
			remedy: fmt.Sprintf("use an image built on a CUDA toolkit that supports compute capability %s", g.ccText)}, true
	}
	return frameworkVerdict{status: Pass, message: fmt.Sprintf("%s is supported by the image's CUDA %s", g.label(), cuda)}, true
}

// kernelTarget is one compiled target and, for PTX, its ISA version ("" =
// unknown).
type kernelTarget struct {
	arch fatbin.Arch
	text string
	isa  string
}

// kernelSet is the targets of one library, or of a version file.
type kernelSet struct {
	where   string
	targets []kernelTarget
}

// kernelSets returns the framework's scanned libraries that carry device
// code, or, when none does, the targets its version file recorded.
func kernelSets(fw facts.Framework) []kernelSet {
	var sets []kernelSet
	for _, lib := range fw.Kernels {
		var ts []kernelTarget
		for _, im := range lib.Images {
			if a, err := fatbin.ParseArch(im.Arch); err == nil {
				ts = append(ts, kernelTarget{arch: a, text: im.Arch, isa: im.PTXVersion})
			}
		}
		if len(ts) > 0 {
			sets = append(sets, kernelSet{where: lib.Path, targets: ts})
		}
	}
	if len(sets) > 0 {
		return sets
	}
	var ts []kernelTarget
	for _, s := range fw.Archs {
		if a, err := fatbin.ParseArch(s); err == nil {
			ts = append(ts, kernelTarget{arch: a, text: s})
		}
	}
	if len(ts) == 0 {
		return nil
	}
	where := fw.Source
	if where == "" {
		where = "its build record"
	}
	return []kernelSet{{where: where, targets: ts}}
}

// cubinRuns reports whether a cubin compiled for target runs on a GPU of
// compute capability cc: same major and a minor no higher than the GPU's;
// an 'a' cubin only on exactly its capability.
func cubinRuns(target, cc fatbin.Arch) bool {
	if target.Major != cc.Major || target.Minor > cc.Minor {
		return false
	}
	return target.Suffix != 'a' || target.Minor == cc.Minor
}

// ptxTargets reports whether PTX for target can be JIT-compiled for a GPU
// of compute capability cc (the ISA aside): any capability at least the
// target's; 'a' only exactly; 'f' within the same major.
func ptxTargets(target, cc fatbin.Arch) bool {
	switch target.Suffix {
	case 'a':
		return target.Major == cc.Major && target.Minor == cc.Minor
	case 'f':
		return target.Major == cc.Major && target.Minor <= cc.Minor
	}
	return cc.Major > target.Major || (cc.Major == target.Major && cc.Minor >= target.Minor)
}

// ptxJIT says whether the driver can JIT a PTX target: ok when it can,
// unknown when that cannot be told, and otherwise why not.
// need is the CUDA version the driver must support for it.
func ptxJIT(t kernelTarget, fw facts.Framework, driverCUDA string) (ok, unknown bool, why, need string) {
	isaText := "PTX ISA " + t.isa
	if t.isa != "" {
		c, known := compat.PTXISACUDA(t.isa)
		if !known {
			return false, true, fmt.Sprintf("%s PTX ISA %s is not in the PTX table", t.text, t.isa), ""
		}
		need = c
	} else {
		// A version file lists targets, not ISA versions: the PTX is
		// taken to be what the framework's CUDA emits.
		need = version.Prefix(fw.CUDAVersion, 2)
		isaText = "PTX of CUDA " + need
		if need == "" {
			return false, true, fmt.Sprintf("the PTX ISA of %s is unknown", t.text), ""
		}
	}
	if driverCUDA == "" {
		return false, true, fmt.Sprintf("the driver's CUDA version is unknown, so whether it can JIT %s (%s) cannot be told", t.text, isaText), need
	}
	if version.AtLeast(driverCUDA, need) {
		return true, false, "", need
	}
	why = fmt.Sprintf("its %s PTX (%s) needs a driver supporting CUDA >= %s, and the driver supports CUDA %s", t.text, isaText, need, driverCUDA)
	if min, known := compat.MinDriver(need); known {
		why += fmt.Sprintf(" (driver >= %s needed)", min)
	}
	return false, false, why, need
}

// frameworkArchVerdict judges one framework on one GPU group: the worst of
// its kernel sets.
func frameworkArchVerdict(in Input, g ccGroup, fw facts.Framework) (frameworkVerdict, bool) {
	sets := kernelSets(fw)
	if len(sets) == 0 {
		return frameworkVerdict{}, false
	}
	var worst frameworkVerdict
	bad := 0
	for i, set := range sets {
		v := kernelSetVerdict(in, g, fw, set)
		if v.status != Pass {
			bad++
		}
		if i == 0 || verdictRank(v.status) > verdictRank(worst.status) {
			worst = v
		}
	}
	if bad > 1 {
		worst.message += fmt.Sprintf(" (and %d more of its libraries)", bad-1)
	}
	return worst, true
}

func kernelSetVerdict(in Input, g ccGroup, fw facts.Framework, set kernelSet) frameworkVerdict {
	name := frameworkLabel(fw)
	var cubins []string
	var jit, jitOK, unknownJIT, blocked []string
	upgradeTo := "" // the lowest CUDA that would JIT a blocked PTX
	for _, t := range set.targets {
		if !t.arch.PTX {
			if cubinRuns(t.arch, g.cc) {
				cubins = append(cubins, t.text)
			}
			continue
		}
		if !ptxTargets(t.arch, g.cc) {
			continue
		}
		jit = append(jit, t.text)
		ok, unknown, why, need := ptxJIT(t, fw, in.Facts.Host.Driver.CUDAVersion)
		switch {
		case ok:
			jitOK = append(jitOK, t.text)
		case unknown:
			unknownJIT = append(unknownJIT, why)
		default:
			blocked = append(blocked, why)
			if upgradeTo == "" || version.Less(need, upgradeTo) {
				upgradeTo = need
			}
		}
	}
	native := fatbin.Arch{Major: g.cc.Major, Minor: g.cc.Minor}.String()
	compiled := targetList(set.targets)
	switch {
	case len(cubins) > 0:
		return frameworkVerdict{status: Pass, message: fmt.Sprintf("%s: %s runs %s cubins from %s", g.label(), name, strings.Join(cubins, ", "), set.where)}
	case len(jitOK) > 0:
		return frameworkVerdict{status: Warn, message: fmt.Sprintf(
			"%s: %s has no cubin for it in %s (%s missing; compiled: %s): the driver will JIT-compile %s PTX at first launch, which is slow and uses the JIT cache",
			g.label(), name, set.where, native, compiled, strings.Join(jitOK, ", ")),
			remedy: fmt.Sprintf("install a %s build compiled for %s to avoid the JIT at start-up (or keep CUDA_CACHE_PATH on a persistent volume)", fw.Name, native)}
	case len(unknownJIT) > 0:
		return frameworkVerdict{status: Warn, message: fmt.Sprintf(
			"%s: %s has no cubin for it in %s (%s missing; compiled: %s), only PTX; %s",
			g.label(), name, set.where, native, compiled, strings.Join(unknownJIT, "; ")),
			remedy: fmt.Sprintf("install a %s build compiled for %s, or make sure the driver supports the PTX's CUDA version", fw.Name, native)}
	}
	msg := fmt.Sprintf("%s: %s has no kernel image for it: %s missing from %s (compiled: %s)",
		g.label(), name, native, set.where, compiled)
	remedy := fmt.Sprintf("install a %s build compiled for %s, or run on a GPU it was compiled for", fw.Name, native)
	if len(blocked) > 0 {
		msg += "; " + strings.Join(blocked, "; ")
		remedy += fmt.Sprintf(", or upgrade the driver%s so that it can JIT the PTX (CUDA >= %s)", driverNeedSuffix(upgradeTo), upgradeTo)
	} else if len(jit) == 0 {
		msg += "; no PTX the driver could JIT for it either"
	}
	return frameworkVerdict{status: Error, message: msg, remedy: remedy}
}

// targetList is "sm_70, sm_80, compute_80".
func targetList(ts []kernelTarget) string {
	seen := map[string]bool{}
	var out []string
	for _, t := range ts {
		if !seen[t.text] {
			seen[t.text] = true
			out = append(out, t.text)
		}
	}
	return strings.Join(out, ", ")
}
