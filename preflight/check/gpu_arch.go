package check

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/compat"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/gpuarch"
	"github.com/gpu-preflight/gpu-preflight/preflight/version"
)

// GPUArch checks that every visible GPU can run the frameworks' kernels
// and is a target of the image's CUDA toolkit, predicting CUDA errors 209
// ("no kernel image is available") and 222 (PTX from an unsupported
// toolchain) before the job starts. The loading rules are docs/fatbin.md's
// (from NVIDIA's compatibility guides): the runtime picks one image per
// fatbin, so every fatbin of every library in the framework's load closure
// is judged. A toolkit with no target for the GPU is an error when every
// target is newer (nothing can JIT down to it), else a warning.
var GPUArch = Check{ID: "gpu-arch", rule: gpuArch}

func gpuArch(in Input) Finding {
	if len(in.Visible) == 0 {
		return Finding{Status: Skip, Message: "no visible GPU"}
	}
	groups := ccGroups(in.Visible)
	if len(groups) == 0 {
		return Finding{Status: Skip, Message: "the visible GPUs' compute capability is unknown"}
	}
	var verdicts []frameworkVerdict
	for _, g := range groups {
		if v, ok := toolkitArchVerdict(in, g); ok {
			verdicts = append(verdicts, v)
		}
		for _, fw := range in.Facts.Container.Judged() {
			if v, ok := frameworkArchVerdict(in, g, fw); ok {
				verdicts = append(verdicts, v)
			}
		}
	}
	if len(verdicts) == 0 {
		return Finding{Status: Skip,
			Message: "no compiled GPU architectures known for the image (no framework kernels scanned, no CUDA toolkit version)"}
	}
	return combineVerdicts(verdicts)
}

type ccGroup struct {
	cc      gpuarch.Arch // Major, Minor of the capability
	ccText  string       // "9.0"
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

// ccGroups groups the visible GPUs of known capability by model and
// capability, in visible order.
func ccGroups(gpus []facts.GPU) []ccGroup {
	var out []ccGroup
	for _, gpu := range gpus {
		a, err := gpuarch.Parse(gpu.ComputeCapability)
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

func toolkitArchVerdict(in Input, g ccGroup) (frameworkVerdict, bool) {
	cuda := version.Prefix(in.Facts.Container.CUDA.Version, 2)
	targets, ok := compat.ToolkitTargets(cuda)
	if !ok {
		return frameworkVerdict{}, false
	}
	lower := false // a target older than the GPU, whose PTX could JIT up to it
	for _, t := range targets {
		a, err := gpuarch.Parse(t)
		if err != nil {
			continue
		}
		if cubinRuns(a, g.cc) {
			return frameworkVerdict{status: Pass, message: fmt.Sprintf("%s is a target of the image's CUDA %s", g.label(), cuda)}, true
		}
		lower = lower || ptxTargets(a, g.cc)
	}
	list := strings.Join(targets, ", ")
	if !lower {
		return frameworkVerdict{status: Error, message: fmt.Sprintf(
			"%s is older than every target of the image's CUDA %s (compute capability %s): its libraries carry no kernels for it",
			g.label(), cuda, list),
			remedy: fmt.Sprintf("use an image built on a CUDA toolkit that supports compute capability %s, or run on a newer GPU", g.ccText)}, true
	}
	return frameworkVerdict{status: Warn, message: fmt.Sprintf(
		"%s is not a target of the image's CUDA %s (compute capability %s): its libraries can reach it only through PTX JIT, if they carry PTX",
		g.label(), cuda, list),
		remedy: fmt.Sprintf("use an image built on a CUDA toolkit that supports compute capability %s", g.ccText)}, true
}

// kernelTarget is one compiled target and, for PTX, its ISA ("" = unknown).
type kernelTarget struct {
	arch gpuarch.Arch
	text string
	isa  string
}

// fatbinSet is the targets shared by count fatbins of a library.
type fatbinSet struct {
	targets []kernelTarget
	count   int
}

// kernelSet is one library's fatbins, or a version file's targets as one fatbin.
type kernelSet struct {
	where   string
	fatbins []fatbinSet
	all     []kernelTarget // every target of the library, for messages
	// label names a library of the load closure ("libnccl.so.2 2.22.3"),
	// "" when recorded without its soname; lazy: loaded on first use.
	label string
	role  libraryRole
	lazy  bool
}

func toTargets(images []facts.KernelImage) []kernelTarget {
	var ts []kernelTarget
	for _, im := range images {
		if a, err := gpuarch.Parse(im.Arch); err == nil {
			ts = append(ts, kernelTarget{arch: a, text: im.Arch, isa: im.PTXVersion})
		}
	}
	return ts
}

// kernelSets returns the framework's libraries that carry device code, or,
// when none does, the targets its version file recorded.
func kernelSets(fw facts.Framework) []kernelSet {
	var sets []kernelSet
	for _, lib := range fw.Kernels {
		all := toTargets(lib.Images)
		if len(all) == 0 {
			continue
		}
		set := kernelSet{where: lib.Path, all: all}
		if lib.Soname != "" {
			set.label, set.role, set.lazy = lib.Soname, roleOf(lib), lib.Lazy
			if lib.Version != "" {
				set.label += " " + lib.Version
			}
			if !set.role.known {
				set.label = frameworkLabel(fw) + " (" + set.label + ")"
			}
		}
		for _, g := range lib.Fatbins {
			if ts := toTargets(g.Images); len(ts) > 0 && g.Count > 0 {
				set.fatbins = append(set.fatbins, fatbinSet{targets: ts, count: g.Count})
			}
		}
		if len(set.fatbins) == 0 {
			set.fatbins = []fatbinSet{{targets: all, count: 1}}
		}
		sets = append(sets, set)
	}
	if len(sets) > 0 {
		return sets
	}
	var ts []kernelTarget
	for _, s := range fw.Archs {
		if a, err := gpuarch.Parse(s); err == nil {
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
	return []kernelSet{{where: where, all: ts, fatbins: []fatbinSet{{targets: ts, count: 1}}}}
}

// cubinRuns: same major and a minor no higher than the GPU's; an 'a'
// cubin only on exactly its capability.
func cubinRuns(target, cc gpuarch.Arch) bool {
	if target.Major != cc.Major || target.Minor > cc.Minor {
		return false
	}
	return target.Suffix != 'a' || target.Minor == cc.Minor
}

// ptxTargets, the ISA aside: any capability at least the target's; 'a'
// only exactly; 'f' within the same major.
func ptxTargets(target, cc gpuarch.Arch) bool {
	switch target.Suffix {
	case 'a':
		return target.Major == cc.Major && target.Minor == cc.Minor
	case 'f':
		return target.Major == cc.Major && target.Minor <= cc.Minor
	}
	return cc.Major > target.Major || (cc.Major == target.Major && cc.Minor >= target.Minor)
}

// ptxJIT says whether the driver can JIT a PTX target (unknown when that
// cannot be told, else why not), and the CUDA the driver must support.
func ptxJIT(t kernelTarget, fw facts.Framework, driverCUDA string) (ok, unknown bool, why, need string) {
	isaText := "PTX ISA " + t.isa
	if t.isa != "" {
		c, known := compat.PTXISACUDA(t.isa)
		if !known {
			newest, beyond := compat.PTXISABeyond(t.isa)
			if !beyond || driverCUDA == "" || version.Less(newest, driverCUDA) {
				return false, true, fmt.Sprintf("%s PTX ISA %s is not in the PTX table", t.text, t.isa), ""
			}
			// Newer than every known ISA: no CUDA of the table emits it.
			return false, false, fmt.Sprintf("its %s PTX (PTX ISA %s) is newer than any CUDA up to %s emits, and the driver supports CUDA %s",
				t.text, t.isa, newest, driverCUDA), newest
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

func frameworkArchVerdict(in Input, g ccGroup, fw facts.Framework) (frameworkVerdict, bool) {
	sets := kernelSets(fw)
	if len(sets) == 0 {
		return frameworkVerdict{}, false
	}
	var vs []frameworkVerdict
	worst := Pass
	for _, set := range sets {
		v := kernelSetVerdict(in, g, fw, set)
		vs = append(vs, v)
		if verdictRank(v.status) > verdictRank(worst) {
			worst = v.status
		}
	}
	// Every library at the worst status is named: one message says all
	// that fails on this GPU.
	const maxNamed = 4
	var msgs, remedies []string
	more := 0
	for _, v := range vs {
		if v.status != worst {
			continue
		}
		if len(msgs) == maxNamed {
			more++
			continue
		}
		msgs = append(msgs, v.message)
		if v.remedy != "" && !slices.Contains(remedies, v.remedy) {
			remedies = append(remedies, v.remedy)
		}
	}
	out := frameworkVerdict{status: worst, message: strings.Join(msgs, "; "), remedy: strings.Join(remedies, "; ")}
	if more > 0 {
		out.message += fmt.Sprintf(" (and %d more of its libraries)", more)
	}
	return out, true
}

type fatbinOutcome struct {
	cubins     []string // cubins that run
	jit        []string // PTX whose target fits
	jitOK      []string // of those, PTX the driver can JIT
	unknownJIT []string // why JIT cannot be told
	blocked    []string // why PTX that fits cannot be JIT-compiled
	upgradeTo  string   // the lowest CUDA that would JIT a blocked PTX
}

func judgeFatbin(in Input, g ccGroup, fw facts.Framework, targets []kernelTarget) fatbinOutcome {
	var o fatbinOutcome
	for _, t := range targets {
		if !t.arch.PTX {
			if cubinRuns(t.arch, g.cc) {
				o.cubins = append(o.cubins, t.text)
			}
			continue
		}
		if !ptxTargets(t.arch, g.cc) {
			continue
		}
		o.jit = append(o.jit, t.text)
		ok, unknown, why, need := ptxJIT(t, fw, in.Facts.Host.Driver.CUDAVersion)
		switch {
		case ok:
			o.jitOK = append(o.jitOK, t.text)
		case unknown:
			o.unknownJIT = append(o.unknownJIT, why)
		default:
			o.blocked = append(o.blocked, why)
			if o.upgradeTo == "" || version.Less(need, o.upgradeTo) {
				o.upgradeTo = need
			}
		}
	}
	return o
}

func kernelSetVerdict(in Input, g ccGroup, fw facts.Framework, set kernelSet) frameworkVerdict {
	if set.label != "" {
		return libraryVerdict(in, g, fw, set)
	}
	name := frameworkLabel(fw)
	native := gpuarch.Arch{Major: g.cc.Major, Minor: g.cc.Minor}.String()
	t := tallyFatbins(in, g, fw, set)
	total, missing, needJIT := t.total, t.missing, t.needJIT
	cubins, jitOK, unknownJIT, blocked, missingTargets := t.cubins, t.jitOK, t.unknownJIT, t.blocked, t.missingTargets
	jitAny, upgradeTo := t.jitAny, t.upgradeTo
	compiled := targetList(set.all)
	if missing == total {
		msg := fmt.Sprintf("%s: %s has no kernel image for it: %s missing from %s (compiled: %s)",
			g.label(), name, native, set.where, compiled)
		remedy := fmt.Sprintf("install a %s build compiled for %s, or run on a GPU it was compiled for", fw.Name, native)
		if len(blocked) > 0 {
			msg += "; " + strings.Join(blocked, "; ")
			remedy += fmt.Sprintf(", or upgrade the driver%s so that it can JIT the PTX (CUDA >= %s)", driverNeedSuffix(upgradeTo), upgradeTo)
		} else if !jitAny {
			msg += "; no PTX the driver could JIT for it either"
		}
		status := Error
		if len(blocked) > 0 {
			status, msg, remedy = onAGuess(in, status, msg, remedy)
		}
		return frameworkVerdict{status: status, message: msg, remedy: remedy}
	}
	if missing > 0 {
		// Libraries that pick kernels by architecture are built this way
		// (cuBLASLt's counts in docs/fatbin.md): no proof of failure, but a
		// kernel launched here fails with 209. A warning with the count.
		msg := fmt.Sprintf("%s: %d of %d fatbins in %s of %s have no kernel image for it (%s missing; those carry only %s): their kernels fail with \"no kernel image is available for execution on the device\" if the library launches them on this GPU, which a library that picks kernels by architecture (as cuBLAS and the frameworks do for some kernels) does not",
			g.label(), missing, total, set.where, name, native, strings.Join(missingTargets, " / "))
		remedy := fmt.Sprintf("if the job fails with \"no kernel image\", install a %s build whose every kernel is compiled for %s", fw.Name, native)
		return frameworkVerdict{status: Warn, message: msg, remedy: remedy}
	}
	if needJIT == 0 {
		return frameworkVerdict{status: Pass, message: fmt.Sprintf("%s: %s runs %s cubins from %s", g.label(), name, strings.Join(cubins, ", "), set.where)}
	}
	part := ""
	if needJIT < total {
		part = fmt.Sprintf(" in %d of %d fatbins", needJIT, total)
	}
	if len(unknownJIT) == 0 {
		return frameworkVerdict{status: Warn, message: fmt.Sprintf(
			"%s: %s has no cubin for it%s in %s (%s missing; compiled: %s): the driver will JIT-compile %s PTX at first launch, which is slow and uses the JIT cache",
			g.label(), name, part, set.where, native, compiled, strings.Join(jitOK, ", ")),
			remedy: fmt.Sprintf("install a %s build compiled for %s to avoid the JIT at start-up (or keep CUDA_CACHE_PATH on a persistent volume)", fw.Name, native)}
	}
	return frameworkVerdict{status: Warn, message: fmt.Sprintf(
		"%s: %s has no cubin for it%s in %s (%s missing; compiled: %s), only PTX; %s",
		g.label(), name, part, set.where, native, compiled, strings.Join(unknownJIT, "; ")),
		remedy: fmt.Sprintf("install a %s build compiled for %s, or make sure the driver supports the PTX's CUDA version", fw.Name, native)}
}

func appendNew(list []string, add ...string) []string {
	for _, s := range add {
		if !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	return list
}

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

// libraryVerdict judges one library of the load closure on one GPU group
// (docs/fatbin.md "When a library without an image is an error"): nothing
// for the GPU is an error for a library every step uses and a warning for
// one used lazily or on demand; fatbins of an archDispatch library without
// this GPU are left out; PTX JIT only warns for a library every step uses.
func libraryVerdict(in Input, g ccGroup, fw facts.Framework, set kernelSet) frameworkVerdict {
	native := gpuarch.Arch{Major: g.cc.Major, Minor: g.cc.Minor}.String()
	t := tallyFatbins(in, g, fw, set)
	compiled := targetList(set.all)
	every := set.role.use == useCore || set.role.use == useCollectives && len(in.Visible) > 1
	if set.lazy {
		every = false
	}
	loaded := set.where
	if set.lazy {
		loaded += ", loaded on first use"
	}
	if t.missing == t.total {
		ptx := "no PTX"
		if len(t.blocked) > 0 {
			ptx = "PTX this driver cannot JIT-compile (" + strings.Join(t.blocked, "; ") + ")"
		} else if t.jitAny {
			ptx = "no PTX it can use"
		}
		msg := fmt.Sprintf("%s has no %s image and %s: %s on %s (%s missing; compiled: %s; %s)",
			set.label, native, ptx, set.role.fails, g.label(), native, compiled, loaded)
		remedy := fmt.Sprintf("replace %s with a release compiled for %s (or a %s build that bundles one), or run on a GPU it was compiled for",
			set.label, native, fw.Name)
		if len(t.blocked) > 0 {
			remedy += fmt.Sprintf(", or upgrade the driver%s so that it can JIT the PTX (CUDA >= %s)", driverNeedSuffix(t.upgradeTo), t.upgradeTo)
		}
		status := Warn
		if every {
			status = Error
		}
		if len(t.blocked) > 0 && status == Error {
			status, msg, remedy = onAGuess(in, status, msg, remedy)
		}
		return frameworkVerdict{status: status, message: msg, remedy: remedy}
	}
	note := ""
	if t.missing > 0 {
		if !set.role.archDispatch {
			return frameworkVerdict{status: Warn, message: fmt.Sprintf(
				"%d of %d fatbins of %s have no %s image (those carry only %s): %s on %s if it launches one of them (%s)",
				t.missing, t.total, set.label, native, strings.Join(t.missingTargets, " / "), set.role.fails, g.label(), loaded),
				remedy: fmt.Sprintf("if the job fails with \"no kernel image\", install a release of %s whose every kernel is compiled for %s", set.label, native)}
		}
		note = fmt.Sprintf(" (%d of its %d fatbins carry only other GPUs' kernels, which it picks by architecture)", t.missing, t.total)
		t.total -= t.missing
	}
	if t.needJIT == 0 {
		return frameworkVerdict{status: Pass, message: fmt.Sprintf("%s runs %s cubins from %s on %s%s", frameworkLabel(fw), strings.Join(t.cubins, ", "), set.label, g.label(), note)}
	}
	part := ""
	if t.needJIT < t.total {
		part = fmt.Sprintf(" in %d of %d fatbins", t.needJIT, t.total)
	}
	if len(t.unknownJIT) > 0 {
		return frameworkVerdict{status: Warn, message: fmt.Sprintf(
			"%s has no %s cubin%s, only PTX: %s (%s on %s if it cannot be JIT-compiled; %s)",
			set.label, native, part, strings.Join(t.unknownJIT, "; "), set.role.fails, g.label(), loaded),
			remedy: fmt.Sprintf("make sure the driver supports the PTX's CUDA version, or install a release of %s compiled for %s", set.label, native)}
	}
	if !every {
		return frameworkVerdict{status: Pass, message: fmt.Sprintf(
			"%s reaches %s only through PTX JIT of %s%s: the first operation that uses it compiles its kernels (%s)",
			set.label, g.label(), strings.Join(t.jitOK, ", "), part, loaded)}
	}
	return frameworkVerdict{status: Warn, message: fmt.Sprintf(
		"%s has no %s cubin%s (%s missing; compiled: %s): the driver will JIT-compile %s PTX at first launch on %s, which is slow and uses the JIT cache (%s)",
		set.label, native, part, native, compiled, strings.Join(t.jitOK, ", "), g.label(), loaded),
		remedy: fmt.Sprintf("install a release of %s compiled for %s to avoid the JIT at start-up, or keep CUDA_CACHE_PATH on a persistent volume", set.label, native)}
}

type fatbinTally struct {
	total, missing, needJIT   int // fatbins: all, with nothing, only through PTX JIT
	cubins, jitOK, unknownJIT []string
	blocked, missingTargets   []string
	jitAny                    bool
	upgradeTo                 string // the lowest CUDA that would JIT a blocked PTX
}

func tallyFatbins(in Input, g ccGroup, fw facts.Framework, set kernelSet) fatbinTally {
	var t fatbinTally
	for _, fb := range set.fatbins {
		o := judgeFatbin(in, g, fw, fb.targets)
		t.total += fb.count
		t.cubins = appendNew(t.cubins, o.cubins...)
		t.jitAny = t.jitAny || len(o.jit) > 0
		t.blocked = appendNew(t.blocked, o.blocked...)
		if o.upgradeTo != "" && (t.upgradeTo == "" || version.Less(o.upgradeTo, t.upgradeTo)) {
			t.upgradeTo = o.upgradeTo
		}
		switch {
		case len(o.cubins) > 0:
		case len(o.jitOK) > 0:
			t.needJIT += fb.count
			t.jitOK = appendNew(t.jitOK, o.jitOK...)
		case len(o.unknownJIT) > 0:
			t.needJIT += fb.count
			t.unknownJIT = appendNew(t.unknownJIT, o.unknownJIT...)
		default:
			t.missing += fb.count
			t.missingTargets = appendNew(t.missingTargets, targetList(fb.targets))
		}
	}
	return t
}
