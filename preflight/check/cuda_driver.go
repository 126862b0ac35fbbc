package check

import (
	"fmt"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/compat"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/version"
)

// CUDADriver is the `cuda-driver` check: the host driver runs the image's
// CUDA runtime natively, through forward compatibility (a newer compat
// libcuda, data-center GPUs only) or, with a warning for its limited
// features, through minor-version compatibility (compat.MVCFloor)
// (docs.nvidia.com/deploy/cuda-compatibility; docs/compat-tables.md).
var CUDADriver = Check{ID: "cuda-driver", rule: cudaDriver}

// cudaDriver's errors all turn on the driver's CUDA version, so an assumed
// one only warns (onAGuess).
func cudaDriver(in Input) Finding {
	f := cudaDriverRules(in)
	f.Status, f.Message, f.Remedy = onAGuess(in, f.Status, f.Message, f.Remedy)
	return f
}

func cudaDriverRules(in Input) Finding {
	f := Finding{}
	img := in.Facts.Container.CUDA
	drv := in.Facts.Host.Driver
	if img.Version == "" {
		f.Status = Skip
		f.Message = "no CUDA runtime found in the image (the judged framework's libcudart, /usr/local/cuda, the distribution's libcudart, CUDA_VERSION)"
		return f
	}
	if !drv.Present() {
		f.Status = Skip
		f.Message = fmt.Sprintf("image CUDA %s; no NVIDIA driver to check it against", img.Version)
		return f
	}
	need := version.Prefix(img.Version, 2)
	have := drv.CUDAVersion
	minDriver, haveMin := compat.MinDriver(need)
	if have == "" {
		f.Status = Warn
		f.Message = fmt.Sprintf("driver %s: its CUDA version is unknown (not in the branch table and NVML did not answer); image CUDA %s", drv.Version, need)
		f.Remedy = "check that the driver supports CUDA " + need
		if haveMin {
			f.Remedy += " (driver >= " + minDriver + ")"
		}
		return f
	}
	if version.AtLeast(have, need) {
		f.Status = Pass
		f.Message = fmt.Sprintf("driver %s supports CUDA <= %s; image CUDA %s%s runs natively", drv.Version, have, need, cudaSourceNote(img))
		if w := staleCompat(in); w != "" {
			f.Status = Warn
			f.Message += "; " + w
			f.Remedy = "remove /usr/local/cuda/compat from LD_LIBRARY_PATH (and /etc/ld.so.conf.d): compat libraries must never be used with a newer host driver"
		}
		return f
	}

	short := fmt.Sprintf("driver %s supports CUDA <= %s; this image needs CUDA %s%s", drv.Version, have, need, cudaSourceNote(img))
	upgrade := "upgrade the driver"
	if haveMin {
		upgrade += " to >= " + minDriver
	}
	fix := upgrade + ", or use an image built for CUDA <= " + have

	if lib, ok := usableCompat(in.Facts.Container.Compat, drv.Version, need); ok {
		if b, known := compat.DriverLifecycle(drv.Version); known {
			// NVIDIA: "New Feature Branches and end-of-life branches are not
			// supported targets for CUDA Forward Compatibility"
			// (compat.ForwardCompatTarget). cuda-compat's host list leaves
			// NFBs out (an error); end-of-life branches are still listed (a warning).
			switch {
			case b.Kind == compat.NewFeature:
				f.Status = Error
				f.Message = fmt.Sprintf("%s: CUDA forward compatibility (%s, driver %s) does not support %s, a New Feature Branch", short, lib.Path, lib.DriverVersion, b.Name())
				f.Remedy = fix + ", on a Long Term Support or Production Branch driver"
				return f
			case !in.Now.IsZero() && b.PastEndOfLife(in.Now):
				f.Status = Warn
				f.Message = fmt.Sprintf("%s: CUDA forward compatibility through %s (driver %s) may work, but %s reached end of life (%s) and is no longer a supported forward-compatibility target",
					short, lib.Path, lib.DriverVersion, b.Name(), b.EndOfLifeText())
				f.Remedy = fix + ", on a supported Long Term Support or Production Branch driver"
				return f
			}
		}
		switch brandSupport(in.Visible) {
		case compat.Supported:
			f.Status = Pass
			f.Message = fmt.Sprintf("%s: CUDA forward compatibility through %s (driver %s) on data-center GPUs", short, lib.Path, lib.DriverVersion)
			return f
		case compat.Maybe:
			f.Status = Warn
			f.Message = fmt.Sprintf("%s: CUDA forward compatibility through %s (driver %s) works only on data-center GPUs (and select RTX SKUs); these GPUs' brand is %s",
				short, lib.Path, lib.DriverVersion, brandSummary(in.Visible))
			f.Remedy = fix + "; on a GPU without forward-compatibility support CUDA fails with error 803"
			return f
		default:
			f.Status = Error
			f.Message = fmt.Sprintf("%s: forward compatibility (%s) is not supported on %s GPUs and fails with CUDA error 803", short, lib.Path, brandSummary(in.Visible))
			f.Remedy = fix
			return f
		}
	}

	if version.Major(have) == version.Major(need) {
		if floor, ok := compat.MVCFloor(version.Major(need)); ok && version.AtLeast(drv.Version, floor) {
			f.Status = Warn
			f.Message = fmt.Sprintf("%s: it runs through CUDA minor-version compatibility (driver >= %s), with limits: APIs that need a newer driver fail with cudaErrorCallRequiresNewerDriver, and PTX built by CUDA %s cannot be JIT-compiled by this driver (error 222)",
				short, floor, need)
			f.Remedy = fix + " for the full feature set"
			return f
		}
	}
	f.Status = Error
	f.Message = short + ": the CUDA runtime will fail with \"CUDA driver version is insufficient for CUDA runtime version\""
	f.Remedy = fix
	return f
}

// cudaSourceNote says whose runtime the image's CUDA is when it is not the
// toolkit's: " (the CUDA runtime torch 2.5.1+cu121 loads, 12.1.105)".
func cudaSourceNote(img facts.CUDAToolkit) string {
	switch img.Kind {
	case facts.CUDAFromRuntime:
		return " (" + img.Source + ")"
	case facts.CUDAFromDistribution:
		return " (the distribution's " + img.Source + ")"
	case facts.CUDAFromEnv:
		return " (from CUDA_VERSION)"
	}
	return ""
}

// usableCompat returns the compat libcuda used for CUDA need on driver host:
// one whose major is above the host's (NVIDIA's enable-cuda-compat hook
// rule without an ELF note) and that supports need.
func usableCompat(libs []facts.CompatLib, host, need string) (facts.CompatLib, bool) {
	for _, lib := range libs {
		if version.Major(lib.DriverVersion) <= version.Major(host) {
			continue
		}
		if c, ok := compat.DriverCUDA(lib.DriverVersion); ok && version.AtLeast(c, need) {
			return lib, true
		}
	}
	return facts.CompatLib{}, false
}

// staleCompat warns of compat libraries older than the host driver on
// LD_LIBRARY_PATH: NVIDIA's hooks skip them, but the path loads them and
// CUDA fails with 803. One of the host's own version (NGC images put
// /usr/local/cuda/compat on the path) or newer is no risk.
func staleCompat(in Input) string {
	ld := in.Facts.Container.Env["LD_LIBRARY_PATH"]
	if !strings.Contains(ld, "/usr/local/cuda/compat") {
		return ""
	}
	host := in.Facts.Host.Driver.Version
	for _, lib := range in.Facts.Container.Compat {
		if c, err := version.Compare(lib.DriverVersion, host); err == nil && c < 0 {
			return fmt.Sprintf("LD_LIBRARY_PATH puts compat library %s (driver %s) in front of the newer host driver %s: CUDA error 803 likely",
				lib.Path, lib.DriverVersion, in.Facts.Host.Driver.Version)
		}
	}
	return ""
}

// brandSupport is the weakest forward-compatibility support among the
// visible GPUs; with no GPU visible it is Maybe.
func brandSupport(gpus []facts.GPU) compat.Support {
	if len(gpus) == 0 {
		return compat.Maybe
	}
	s := compat.Supported
	for _, g := range gpus {
		if b := compat.ForwardCompat(g.Brand); b < s {
			s = b
		}
	}
	return s
}

func brandSummary(gpus []facts.GPU) string {
	seen := map[string]bool{}
	var out []string
	for _, g := range gpus {
		b := g.Brand
		if b == "" {
			b = "unknown"
		}
		if !seen[b] {
			seen[b] = true
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		return "unknown (no GPU visible)"
	}
	return strings.Join(out, "/")
}
