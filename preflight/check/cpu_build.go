package check

import (
	"fmt"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/releases"
	"github.com/gpu-preflight/gpu-preflight/preflight/version"
)

// CPUBuild is the `cpu-build` check: a CPU-only framework build in a
// container that sees GPUs ignores them and trains on the CPU. Without
// visible GPUs a CPU build is what was meant.
var CPUBuild = Check{ID: "cpu-build", rule: cpuBuild}

func cpuBuild(in Input) Finding {
	f := Finding{}
	var cpu, rocm []facts.Framework
	fws := in.Facts.Container.Judged()
	for _, fw := range fws {
		switch fw.Build {
		case facts.BuildCPU:
			cpu = append(cpu, fw)
		case facts.BuildROCm:
			rocm = append(rocm, fw)
		}
	}
	switch {
	case len(fws) == 0:
		f.Status, f.Message = Skip, noFramework(in.Facts.Container)
		return f
	case len(cpu) == 0 && len(rocm) == 0:
		f.Status, f.Message = Pass, "no CPU-only framework build"
		return f
	case len(in.Visible) == 0:
		f.Status = Pass
		f.Message = "CPU-only build of " + labels(append(cpu, rocm...)) + ", and no GPU is visible"
		if len(cpu) == 0 {
			f.Message = "ROCm build of " + labels(rocm) + ", and no NVIDIA GPU is visible"
		}
		return f
	case len(cpu) == 0:
		// A ROCm build falls back to the CPU here; the image was built for
		// the other vendor, so a CUDA package is not its fix.
		f.Status = Warn
		if in.Options.RequireGPU {
			f.Status = Error
		}
		f.Message = fmt.Sprintf("%s built for ROCm (AMD GPUs), while %d NVIDIA GPU(s) are visible: it will not use them",
			labels(rocm), len(in.Visible))
		f.Remedy = "run this image on AMD GPUs with ROCm, or use an image whose " + frameworkNames(rocm) + " is a CUDA build for these NVIDIA GPUs"
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

func frameworkNames(fws []facts.Framework) string {
	var s []string
	for _, fw := range fws {
		s = append(s, fw.Name)
	}
	return strings.Join(s, ", ")
}

func labels(fws []facts.Framework) string {
	var s []string
	for _, fw := range fws {
		s = append(s, frameworkLabel(fw))
	}
	return strings.Join(s, ", ")
}

// gpuPackage names the GPU build of fw for a driver supporting driverCUDA
// ("" when unknown): the best wheel of preflight/releases it runs natively,
// else the package name and the driver's CUDA line.
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
	// The frameworks' install pages name these packages.
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
