package check

import (
	"fmt"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/compat"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/version"
)

// CUDADriver is the `cuda-driver` check: the host driver can run the
// image's CUDA runtime, natively, through CUDA forward compatibility
// (/usr/local/cuda/compat), or through minor-version compatibility.
//
// Rules (docs.nvidia.com/deploy/cuda-compatibility; docs/compat-tables.md):
//   - native: the driver's CUDA version >= the image's CUDA major.minor;
//   - forward compatibility: a compat libcuda newer than the host driver
//     (host driver major < compat major), whose CUDA covers the image, on
//     data-center GPUs only; never when the host driver is newer than the
//     compat library;
//   - minor-version compatibility: same CUDA major and driver >= the major's
//     floor (11.x 450.80.02, 12.x 525.60.13, 13.x 580.65.06): runs with a
//     limited feature set, so a warning;
//   - otherwise the runtime fails with "CUDA driver version is insufficient".
var CUDADriver = Check{ID: "cuda-driver", rule: cudaDriver}

// cudaDriver applies cudaDriverRules; every error they give turns on the
// driver's CUDA version, so an assumed one only warns (onAGuess).
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
			// supported targets for CUDA Forward Compatibility" (the
			// data-center driver lifecycle, compat.ForwardCompatTarget).
			// cuda-compat's own list of host branches leaves NFBs out, so
			// the compat library is not used there: an error. An
			// end-of-life branch is unsupported but still listed by the
			// compat packages of its time: a warning.
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

// cudaSourceNote is " (the CUDA runtime torch 2.5.1+cu121 loads, 12.1.105)"
// when the image's CUDA is not the toolkit's, so that a verdict on a
// framework's own runtime says whose it is; "" for the toolkit.
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

// usableCompat returns the compat libcuda that would be used for an image
// needing CUDA need on a host with driver host: the compat driver is newer
// than the host's (major strictly greater: NVIDIA's enable-cuda-compat hook
// rule without an ELF note) and supports CUDA need.
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

// staleCompat warns when compat libraries older than the host driver are
// forced onto the library path: NVIDIA's hooks skip them, but an
// LD_LIBRARY_PATH entry loads them anyway and CUDA fails with error 803.
// A compat library of the host driver's own version, or a newer one, is
// no risk: the first is the host's user-space driver itself (every NGC
// image puts /usr/local/cuda/compat on LD_LIBRARY_PATH, and its compat
// package can match the node's driver), the second is forward
// compatibility.
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
