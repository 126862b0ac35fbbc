package check

import (
	"fmt"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/internal/truncate"
	"github.com/gpu-preflight/gpu-preflight/preflight/compat"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/require"
)

// CUDARequirement is the `cuda-requirement` check: every NVIDIA_REQUIRE_*
// (and PREFLIGHT_REQUIRE) holds on every visible GPU, as in libnvidia-container.
var CUDARequirement = Check{ID: "cuda-requirement", rule: cudaRequirement}

// Requirements is what the check evaluates: the image's, then PREFLIGHT_REQUIRE.
func Requirements(in Input) []facts.Requirement {
	reqs := append([]facts.Requirement(nil), in.Facts.Container.Requirements...)
	if in.Options.ExtraRequire != "" {
		reqs = append(reqs, facts.Requirement{Var: "PREFLIGHT_REQUIRE", Value: in.Options.ExtraRequire})
	}
	return reqs
}

// RequireHost is the host as libnvidia-container's rules see it.
func RequireHost(in Input) require.Host {
	return require.Host{CUDA: in.Facts.Host.Driver.CUDAVersion, Driver: in.Facts.Host.Driver.Version}
}

// RequireDevices returns the visible GPUs as the requirement language's devices.
func RequireDevices(in Input) []require.Device {
	devs := make([]require.Device, 0, len(in.Visible))
	for _, g := range in.Visible {
		devs = append(devs, require.Device{Index: g.Index, Arch: g.ComputeCapability, Brand: g.Brand})
	}
	return devs
}

func cudaRequirement(in Input) Finding {
	c := in.Facts.Container
	f := Finding{}
	if c.RequireError != "" {
		f.Status = Error
		f.Message = c.RequireError
		// Collect's errors each end with their own fix.
		f.Remedy = "change the variable the message names in the image (Dockerfile ENV) or the container's environment, as the message says"
		return f
	}
	if c.RequireDisabled && in.Options.ExtraRequire == "" {
		f.Status = Skip
		f.Message = fmt.Sprintf("NVIDIA_DISABLE_REQUIRE=%s: the image's requirements are not checked", c.Env["NVIDIA_DISABLE_REQUIRE"])
		return f
	}
	reqs := Requirements(in)
	if c.RequireDisabled {
		reqs = reqs[len(reqs)-1:] // PREFLIGHT_REQUIRE still applies
	}
	if len(reqs) == 0 {
		f.Status = Skip
		f.Message = "the image declares no NVIDIA_REQUIRE_* and no CUDA_VERSION"
		return f
	}
	if !in.Facts.Host.Driver.Present() {
		f.Status = Skip
		f.Message = "no NVIDIA driver to evaluate " + varList(reqs) + " against"
		return f
	}
	results := require.DecideAll(reqs, RequireHost(in), RequireDevices(in))
	var failed []require.Result
	for _, r := range results {
		if r.Err != nil {
			f.Status = Error
			f.Message = fmt.Sprintf("%s is not a valid requirement: %v", r.Requirement.Var, r.Err)
			f.Remedy = fmt.Sprintf("fix %s in the image (grammar: space-separated OR terms of comma-separated cuda/driver/arch/brand factors, e.g. cuda>=12.2 brand=tesla,driver>=535,driver<536)", r.Requirement.Var)
			return f
		}
		if !r.Satisfied {
			failed = append(failed, r)
		}
	}
	if len(failed) == 0 {
		f.Status = Pass
		f.Message = satisfiedMessage(results, in)
		return f
	}
	f.Status = Error
	f.Message, f.Remedy = unsatisfiedMessage(failed[0], len(failedDevices(failed)), len(in.Visible), in)
	if cudaAssumed(in) && holdsWithoutCUDA(reqs, in) {
		// It fails only on the guessed CUDA version: unknown, it would hold
		// (a missing property satisfies its factor, as in libnvidia-container).
		f.Status, f.Message, f.Remedy = onAGuess(in, f.Status, f.Message, f.Remedy)
	}
	return f
}

func holdsWithoutCUDA(reqs []facts.Requirement, in Input) bool {
	h := RequireHost(in)
	h.CUDA = ""
	for _, r := range require.DecideAll(reqs, h, RequireDevices(in)) {
		if r.Err != nil || !r.Satisfied {
			return false
		}
	}
	return true
}

func varList(reqs []facts.Requirement) string {
	var names []string
	for _, r := range reqs {
		names = append(names, r.Var)
	}
	return strings.Join(names, ", ")
}

func satisfiedMessage(results []require.Result, in Input) string {
	held := map[string]string{}
	var order []string
	for _, r := range results {
		if _, ok := held[r.Requirement.Var]; !ok {
			order = append(order, r.Requirement.Var)
		}
		held[r.Requirement.Var] = r.HeldTerm()
	}
	var parts []string
	for _, v := range order {
		t := held[v]
		if t == "" {
			t = "(empty)"
		}
		parts = append(parts, v+" holds through "+truncate.Quote(t, truncate.MessageBytes))
	}
	scope := "with no GPU visible"
	if n := len(in.Visible); n > 0 {
		scope = fmt.Sprintf("on %d GPU(s)", n)
	}
	return fmt.Sprintf("%s %s (driver %s, CUDA %s)", strings.Join(parts, "; "), scope,
		in.Facts.Host.Driver.Version, orUnknown(in.Facts.Host.Driver.CUDAVersion))
}

func failedDevices(failed []require.Result) map[int]bool {
	devs := map[int]bool{}
	for _, r := range failed {
		if r.Device != nil {
			devs[r.Device.Index] = true
		}
	}
	return devs
}

// unsatisfiedMessage explains a failed requirement with the driver, its
// CUDA, what the image needs, the smallest driver and the branches accepted.
func unsatisfiedMessage(r require.Result, nFailed, nVisible int, in Input) (msg, remedy string) {
	d := in.Facts.Host.Driver
	where := ""
	if r.Device != nil {
		where = " on " + gpuLabel(in, r.Device.Index)
		if nFailed > 1 {
			where += fmt.Sprintf(" (and %d more of %d GPUs)", nFailed-1, nVisible)
		}
	}
	v := r.Requirement.Value
	floor := require.CUDAFloor(v)
	minDriver, haveMin := compat.MinDriver(floor)
	br := require.Branches(v)
	// The driver's CUDA is the point only for a CUDA or driver factor.
	aboutDriver := floor != "" || len(br) > 0 || strings.Contains(v, "driver")
	own := r.Requirement.Var == "PREFLIGHT_REQUIRE"
	if aboutDriver {
		msg = fmt.Sprintf("%s is not satisfied%s: driver %s supports CUDA <= %s", r.Requirement.Var, where, d.Version, orUnknown(d.CUDAVersion))
	} else {
		msg = fmt.Sprintf("%s is not satisfied%s", r.Requirement.Var, where)
	}
	switch {
	case floor != "":
		what := "this image needs"
		if own {
			what = "PREFLIGHT_REQUIRE asks for"
		}
		msg += "; " + what + " CUDA " + floor
		if haveMin {
			msg += " (driver >= " + minDriver + ")"
		}
	default:
		msg += "; no term of " + truncate.Quote(v, truncate.MessageBytes) + " held"
	}
	if len(br) > 0 {
		msg += ", or a driver of branch " + branchList(br)
	}
	var fixes []string
	if haveMin {
		fixes = append(fixes, "upgrade the driver to >= "+minDriver)
	} else if floor != "" {
		fixes = append(fixes, "upgrade the driver to one that supports CUDA "+floor)
	}
	if d.CUDAVersion != "" && floor != "" && !own {
		fixes = append(fixes, "use an image built for CUDA <= "+d.CUDAVersion)
	}
	if len(fixes) == 0 {
		fixes = append(fixes, "run on a node that satisfies "+r.Requirement.Var+" (gpu-preflight explain shows which factor failed)")
	}
	if own {
		// NVIDIA_DISABLE_REQUIRE does not lift the job's own PREFLIGHT_REQUIRE.
		remedy = strings.Join(fixes, ", or ") + "; or change PREFLIGHT_REQUIRE; to override, set PREFLIGHT_IGNORE=cuda-requirement"
		return msg, remedy
	}
	remedy = strings.Join(fixes, ", or ") + "; to override, set PREFLIGHT_IGNORE=cuda-requirement (or NVIDIA_DISABLE_REQUIRE=true, which the toolkit also honours)"
	return msg, remedy
}

func gpuLabel(in Input, index int) string {
	for _, g := range in.Visible {
		if g.Index == index {
			label := fmt.Sprintf("GPU %d", index)
			var attrs []string
			if g.Name != "" {
				attrs = append(attrs, g.Name)
			}
			if g.Brand != "" {
				attrs = append(attrs, "brand "+g.Brand)
			}
			if g.ComputeCapability != "" {
				attrs = append(attrs, "compute capability "+g.ComputeCapability)
			}
			if len(attrs) > 0 {
				label += " (" + strings.Join(attrs, ", ") + ")"
			}
			return label
		}
	}
	return fmt.Sprintf("GPU %d", index)
}

// branchList renders forward-compatibility branches: "470.x, 535.x or 550.x
// on brands tesla, nvidia".
func branchList(br []require.Branch) string {
	var names []string
	brands := map[string]bool{}
	var brandOrder []string
	for _, b := range br {
		names = append(names, b.String())
		for _, x := range b.Brands {
			if !brands[x] {
				brands[x] = true
				brandOrder = append(brandOrder, x)
			}
		}
	}
	s := joinOr(names)
	if len(brandOrder) > 0 {
		s += " on brand " + strings.Join(brandOrder, "/")
	}
	return s
}

func joinOr(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}
