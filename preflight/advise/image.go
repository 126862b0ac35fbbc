package advise

import (
	"slices"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/compat"
	"github.com/gpu-preflight/gpu-preflight/preflight/nodeclass"
	"github.com/gpu-preflight/gpu-preflight/preflight/version"
)

// BranchFloor is the lowest driver of one branch an image runs on.
type BranchFloor struct {
	Branch int `json:"branch"`
	// Lifecycle is the branch's lifecycle row, when LifecycleKnown.
	Lifecycle      compat.Branch `json:"lifecycle"`
	LifecycleKnown bool          `json:"lifecycleKnown"`
	// MinDriver is the branch's lowest driver that runs the image, "" when
	// none does; AnyDriver: every one does.
	MinDriver string `json:"minDriver,omitempty"`
	AnyDriver bool   `json:"anyDriver,omitempty"`
	// Status is the worst check on that driver (error when none runs the
	// image) and Why their messages that are not a pass.
	Status check.Status `json:"status"`
	Why    string       `json:"why,omitempty"`
	// FailsOnBrands are the brands on which that driver still fails.
	FailsOnBrands []string `json:"failsOnBrands,omitempty"`
}

// GPUFit is how the image's kernels meet one compute capability.
type GPUFit struct {
	ComputeCapability string `json:"computeCapability"`
	// Status is gpu-arch's: pass (a cubin), warn (PTX JIT only, or beyond
	// the toolkit), error (no kernel image).
	Status check.Status `json:"status"`
	Why    string       `json:"why"`
}

// ImageAdvice answers advise --root: which drivers and GPUs an image runs on.
type ImageAdvice struct {
	// CUDA are the CUDA versions of the image's toolkit and frameworks, once each.
	CUDA     []string      `json:"cuda"`
	Branches []BranchFloor `json:"branches"`
	GPUs     []GPUFit      `json:"gpus"`
	// GPUsKnown is false when nothing could be judged by gpu-arch.
	GPUsKnown bool `json:"gpusKnown"`
}

// ForImage judges img on every driver branch (the lowest driver per branch,
// over nodeclass.Points) and, on the newest, every compute capability.
func ForImage(img nodeclass.Image) ImageAdvice {
	var a ImageAdvice
	for _, c := range append([]string{img.Container.CUDA.Version}, frameworkCUDA(img)...) {
		if c = version.Prefix(c, 2); c != "" && !slices.Contains(a.CUDA, c) {
			a.CUDA = append(a.CUDA, c)
		}
	}
	ps := nodeclass.Points(img)
	judge := nodeclass.NewClassifier(img)
	branches := compat.Branches()
	for i, b := range branches {
		next := int64(b + 10)
		if i+1 < len(branches) {
			next = int64(branches[i+1])
		}
		f := BranchFloor{Branch: b, Status: check.Error}
		f.Lifecycle, f.LifecycleKnown = compat.Lifecycle(b)
		var firstWhy string
		for _, p := range ps {
			if p[0] < int64(b) || p[0] >= next {
				continue
			}
			fs := nodeclass.Judge(img, p, "", "")
			ok, failing := judge.Admits(p, "")
			if !ok {
				if firstWhy == "" {
					firstWhy = messages(fs, check.Error)
				}
				continue
			}
			if nodeclass.Failed(img, fs) {
				// Only some brands run it: report the checks on one that does.
				for _, br := range nodeclass.Brands {
					if g := nodeclass.Judge(img, p, "", br); !nodeclass.Failed(img, g) {
						fs = g
						break
					}
				}
			}
			f.MinDriver, f.AnyDriver, f.FailsOnBrands = p.String(), p == nodeclass.Version{int64(b), 0, 0}, failing
			f.Status, f.Why = worst(fs), messages(fs, check.Warn)
			break
		}
		if f.MinDriver == "" {
			f.Why = firstWhy
		}
		a.Branches = append(a.Branches, f)
	}
	newest := nodeclass.Version{int64(branches[len(branches)-1]), 0, 0}
	for _, cc := range compat.ComputeCapabilities() {
		f := check.GPUArch.Run(nodeclass.Input(img, newest, cc, ""))
		if f.Status != check.Skip {
			a.GPUsKnown = true
		}
		a.GPUs = append(a.GPUs, GPUFit{ComputeCapability: cc, Status: f.Status, Why: f.Message})
	}
	return a
}

func frameworkCUDA(img nodeclass.Image) []string {
	var out []string
	for _, fw := range img.Container.Frameworks {
		out = append(out, fw.CUDAVersion)
	}
	return out
}

func worst(fs []check.Finding) check.Status {
	w := check.Pass
	for _, f := range fs {
		if f.Status.Severity() > w.Severity() {
			w = f.Status
		}
	}
	return w
}

// messages joins the messages of the findings at least as bad as min.
func messages(fs []check.Finding, min check.Status) string {
	var out []string
	for _, f := range fs {
		if f.Status.Severity() >= min.Severity() && f.Status.Severity() > 0 {
			out = append(out, f.ID+": "+f.Message)
		}
	}
	return strings.Join(out, "; ")
}
