package check

import (
	"fmt"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/releases"
	"github.com/gpu-preflight/gpu-preflight/preflight/version"
)

// CPUBuild is the `cpu-build` check: a framework built for the CPU only
// (paddlepaddle instead of paddlepaddle-gpu, a +cpu torch, a CPU TensorFlow
// or a jaxlib without a CUDA plugin) in a container that sees GPUs. Such a
// framework starts, ignores the GPUs, and trains on the CPU: a warning, an
// error under PREFLIGHT_REQUIRE_GPU. Without visible GPUs a CPU build is
// what was meant, and the check passes.
var CPUBuild = Check{ID: "cpu-build", rule: cpuBuild}

func cpuBuild(in Input) Finding {
	f := Finding{}
	var cpu []facts.Framework
	for _, fw := range in.Facts.Container.Frameworks {
		if fw.Build == facts.BuildCPU {
			cpu = append(cpu, fw)
		}
	}
	switch {
	case len(in.Facts.Container.Frameworks) == 0:
		f.Status, f.Message = Skip, "no deep-learning framework found in the image"
		return f
	case len(cpu) == 0:
		f.Status, f.Message = Pass, "no CPU-only framework build"
		return f
	case len(in.Visible) == 0:
		f.Status = Pass
		f.Message = "CPU-only build of " + labels(cpu) + ", and no GPU is visible"
		return f
	}
	f.Status = Warn
	if in.Options.RequireGPU {
		f.Status = Error
	}
	f.Message = fmt.Sprintf("%s built for the CPU only, while %d GPU(s) are visible: it will not use them",
		labels(cpu), len(in.Visible))
	var fixes []string
	for _, fw := range cpu {
		fixes = append(fixes, gpuPackage(fw, in.Facts.Host.Driver.CUDAVersion))
	}
	f.Remedy = strings.Join(fixes, "; ")
	return f
}

func labels(fws []facts.Framework) string {
	var s []string
	for _, fw := range fws {
		s = append(s, frameworkLabel(fw))
	}
	return strings.Join(s, ", ")
}

// gpuPackage names the GPU build of fw to install for a driver that
// supports CUDA driverCUDA ("12.4"; "" when unknown): from the frameworks'
// release table (preflight/releases) the best wheel this driver runs
// natively, of fw's own release when there is one; without a row, the
// package name and the driver's CUDA line.
func gpuPackage(fw facts.Framework, driverCUDA string) string {
	if version.Valid(driverCUDA) {
		if b, ok := nativeWheel(fw, driverCUDA); ok {
			return fmt.Sprintf("install the GPU build %s, which this driver (CUDA <= %s) runs natively: %s",
				b.Name(), version.Prefix(driverCUDA, 2), b.Install)
		}
	}
	ver := baseVersion(fw.Version)
	line, major := "", ""
	if version.Valid(driverCUDA) {
		dc := version.Prefix(driverCUDA, 2)
		line = " for CUDA <= " + dc + " (what this driver supports)"
		major = fmt.Sprint(version.Major(dc))
	}
	pin := func(pkg string) string {
		if ver == "" {
			return pkg
		}
		return pkg + "==" + ver
	}
	// The frameworks' install pages name the packages: paddlepaddle-gpu,
	// torch from download.pytorch.org/whl/cuXYZ, tensorflow[and-cuda]
	// (TF 2.14+), jax[cudaNN].
	switch fw.Name {
	case "paddlepaddle":
		return fmt.Sprintf("replace paddlepaddle with paddlepaddle-gpu%s: pip install %s from the index of a CUDA build at or below that version",
			line, pin("paddlepaddle-gpu"))
	case "torch":
		return fmt.Sprintf("install a CUDA build of torch%s: pip install %s --index-url https://download.pytorch.org/whl/cuXYZ, with cuXYZ the highest CUDA build at or below it",
			line, pin("torch"))
	case "tensorflow":
		return fmt.Sprintf("install TensorFlow with its CUDA libraries%s: pip install '%s' (replacing tensorflow-cpu)",
			line, pin("tensorflow[and-cuda]"))
	case "jax":
		extra := "jax[cuda12]"
		if major != "" {
			extra = "jax[cuda" + major + "]"
		}
		return fmt.Sprintf("install the CUDA plugin%s: pip install '%s'", line, extra)
	}
	return "install the GPU build of " + fw.Name + line
}

// nativeWheel is the best wheel of fw's framework that a driver supporting
// driverCUDA runs natively, preferring fw's own major.minor release.
func nativeWheel(fw facts.Framework, driverCUDA string) (releases.Build, bool) {
	var best releases.Build
	found := false
	release := version.Prefix(baseVersion(fw.Version), 2)
	for _, b := range releases.NativeFor(fw.Name, driverCUDA) {
		if b.Kind != releases.Wheel {
			continue
		}
		if release != "" && version.Prefix(b.Version, 2) == release {
			return b, true
		}
		if !found {
			best, found = b, true
		}
	}
	return best, found
}

// baseVersion drops a local version tag: "2.3.1+cpu" -> "2.3.1".
func baseVersion(v string) string {
	base, _, _ := strings.Cut(v, "+")
	return base
}
