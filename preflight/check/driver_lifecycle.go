package check

import (
	"fmt"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/compat"
	"github.com/gpu-preflight/gpu-preflight/preflight/version"
)

// DriverLifecycle is the `driver-lifecycle` check: the host driver's branch
// is inside NVIDIA's support window (compat.Lifecycle, docs/driver-lifecycle.md).
// Past end of life, a New Feature Branch or unknown is only info: an old
// driver runs what it supports, and cuda-driver decides that.
var DriverLifecycle = Check{ID: "driver-lifecycle", rule: driverLifecycle}

func driverLifecycle(in Input) Finding {
	f := Finding{}
	d := in.Facts.Host.Driver
	if !d.Present() {
		f.Status, f.Message = Skip, "no NVIDIA driver found"
		return f
	}
	b, known := compat.DriverLifecycle(d.Version)
	if !known {
		f.Status = Info
		f.Message = fmt.Sprintf("driver %s: branch R%d is not in gpu-preflight's copy of NVIDIA's data-center driver lifecycle, so whether NVIDIA still supports it is unknown",
			d.Version, version.Major(d.Version))
		f.Remedy = "look the branch up in NVIDIA's data-center driver documentation (Supported Drivers and CUDA Toolkit Versions); " + moveTo(in)
		return f
	}
	if in.Now.IsZero() {
		f.Status = Skip
		f.Message = fmt.Sprintf("driver %s is on %s (%s, end of life %s); the day of the run is unknown, so whether it is still supported is not judged",
			d.Version, b.Name(), b.Kind, b.EndOfLifeText())
		return f
	}
	cuda := imageCUDA(in)
	switch {
	case b.PastEndOfLife(in.Now):
		f.Status = Info
		f.Message = fmt.Sprintf("driver %s is on %s (%s), past its end of life (%s): no more bug or security fixes, and not a CUDA forward-compatibility target",
			d.Version, b.Name(), b.Kind, b.EndOfLifeText())
		f.Remedy = moveTo(in)
	case b.Kind == compat.NewFeature:
		f.Status = Info
		f.Message = fmt.Sprintf("driver %s is on %s, a New Feature Branch: short-lived, and not a CUDA forward-compatibility target", d.Version, b.Name())
		if eol := b.EndOfLifeText(); eol != "" {
			f.Message += "; end of life " + eol
		}
		f.Remedy = moveTo(in)
	case b.Kind == compat.KindUnknown:
		f.Status = Info
		f.Message = fmt.Sprintf("driver %s is on %s, whose designation is unknown; end of life %s", d.Version, b.Name(), b.EndOfLifeText())
		f.Remedy = moveTo(in)
	default:
		f.Status = Pass
		f.Message = fmt.Sprintf("driver %s is on %s (%s), supported until the end of %s", d.Version, b.Name(), b.Kind, b.EndOfLife)
		if cuda != "" {
			f.Message += fmt.Sprintf("; image CUDA %s", cuda)
		}
	}
	return f
}

// moveTo names the supported branches that run the image's CUDA natively.
func moveTo(in Input) string {
	cuda := imageCUDA(in)
	var branches []compat.Branch
	if cuda != "" {
		branches = compat.SupportedBranchesFor(cuda, in.Now)
	} else {
		branches = compat.SupportedBranches(in.Now)
	}
	if len(branches) == 0 {
		if cuda != "" {
			return "no supported branch in gpu-preflight's lifecycle table runs CUDA " + cuda + " natively; check NVIDIA's driver documentation"
		}
		return "no branch in gpu-preflight's lifecycle table is supported today; check NVIDIA's driver documentation"
	}
	var names []string
	for _, b := range branches {
		names = append(names, fmt.Sprintf("%s (%s, until %s)", b.Name(), b.Kind.Short(), b.EndOfLife))
	}
	what := "supported branches"
	if cuda != "" {
		what = "supported branches that run this image's CUDA " + cuda + " natively"
	}
	return "move the node to a " + what + ": " + strings.Join(names, ", ")
}

// imageCUDA is the highest CUDA major.minor the image needs: its toolkit's
// or any framework's build, whichever is newer; "" when neither is known.
func imageCUDA(in Input) string {
	c := in.Facts.Container
	need := version.Prefix(c.CUDA.Version, 2)
	for _, fw := range c.Judged() {
		fc := version.Prefix(fw.CUDAVersion, 2)
		if fc == "" || !version.Valid(fc) {
			continue
		}
		if need == "" || !version.Valid(need) || version.Less(need, fc) {
			need = fc
		}
	}
	if !version.Valid(need) {
		return ""
	}
	return need
}
