package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/compat"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/version"
)

// FrameworkCUDA checks that every judged framework's CUDA build runs on the
// host driver, by the cuda-driver rules (docs/sources.md, "Driver and
// toolkit tables"), and that its major agrees with the image's toolkit.
var FrameworkCUDA = Check{ID: "framework-cuda", rule: frameworkCUDA}

// frameworkVerdict is one rule's outcome inside a check.
type frameworkVerdict struct {
	status  Status
	message string
	remedy  string
}

func frameworkCUDA(in Input) Finding {
	fws := in.Facts.Container.Judged()
	if len(fws) == 0 {
		return Finding{Status: Skip, Message: noFramework(in.Facts.Container)}
	}
	var built, cpu []string
	var verdicts []frameworkVerdict
	for _, fw := range fws {
		if fw.CUDAVersion == "" {
			label := frameworkLabel(fw)
			switch fw.Build {
			case facts.BuildCPU:
				label += " (CPU build)"
			case facts.BuildROCm:
				label += " (ROCm build)"
			default:
				label += " (CUDA build not recorded)"
			}
			cpu = append(cpu, label)
			continue
		}
		built = append(built, frameworkLabel(fw))
		verdicts = append(verdicts, driverCUDAVerdict(in, fw))
		if v, ok := toolkitMajorVerdict(in, fw); ok {
			verdicts = append(verdicts, v)
		}
	}
	if len(built) == 0 {
		return Finding{Status: Skip,
			Message: "no framework built for CUDA: " + strings.Join(cpu, ", ")}
	}
	return combineVerdicts(verdicts)
}

// combineVerdicts folds verdicts into one finding: the worst status, with
// the messages and remedies of every verdict at it.
func combineVerdicts(vs []frameworkVerdict) Finding {
	worst := Pass
	for _, v := range vs {
		if verdictRank(v.status) > verdictRank(worst) {
			worst = v.status
		}
	}
	var msgs, remedies []string
	for _, v := range vs {
		if v.status != worst {
			continue
		}
		msgs = append(msgs, v.message)
		if v.remedy != "" && !slices.Contains(remedies, v.remedy) {
			remedies = append(remedies, v.remedy)
		}
	}
	f := Finding{Status: worst, Message: strings.Join(msgs, "; ")}
	if worst.Severity() > 0 {
		f.Remedy = strings.Join(remedies, "; ")
	}
	return f
}

// verdictRank ranks skip above pass: "could not tell" is never "fine".
func verdictRank(s Status) int {
	switch s {
	case Pass:
		return 0
	case Skip:
		return 1
	}
	return 1 + s.Severity()
}

// noFramework says why no framework is judged: none was found, or every
// one found is shadowed or outside the command's interpreter.
func noFramework(c facts.Container) string {
	if len(c.Frameworks) == 0 {
		return "no deep-learning framework found in the image"
	}
	var out []string
	for _, fw := range c.Frameworks {
		out = append(out, frameworkLabel(fw)+" at "+fw.Location+": "+fw.NotJudged)
	}
	return "no framework the command imports: " + strings.Join(out, "; ")
}

// frameworkLabel is "torch 2.5.1", and "torch 2.5.1 in /opt/conda/envs/a"
// for one of several environments that may run the command.
func frameworkLabel(fw facts.Framework) string {
	label := fw.Name
	if fw.Version != "" {
		label += " " + fw.Version
	}
	if fw.Candidate {
		label += " in " + fw.Environment
	}
	return label
}

// driverCUDAVerdict's verdicts turn on the driver's CUDA version, so an
// assumed one never makes it an error (onAGuess).
func driverCUDAVerdict(in Input, fw facts.Framework) frameworkVerdict {
	v := driverCUDARules(in, fw)
	v.status, v.message, v.remedy = onAGuess(in, v.status, v.message, v.remedy)
	return v
}

func driverCUDARules(in Input, fw facts.Framework) frameworkVerdict {
	d := in.Facts.Host.Driver
	fc := version.Prefix(fw.CUDAVersion, 2)
	name := frameworkLabel(fw)
	if d.CUDAVersion == "" {
		return frameworkVerdict{status: Skip, message: fmt.Sprintf(
			"%s is built for CUDA %s; the driver's CUDA version is unknown, so whether it runs cannot be told", name, fc)}
	}
	dc := version.Prefix(d.CUDAVersion, 2)
	drv := driverLabel(d)
	need := minDriverClause(fc)
	if !version.Less(dc, fc) {
		return frameworkVerdict{status: Pass, message: fmt.Sprintf("%s (CUDA %s) runs on %s (CUDA %s)", name, fc, drv, dc)}
	}
	fMajor, dMajor := version.Major(fc), version.Major(dc)
	remedy := fmt.Sprintf("upgrade the host driver%s, or install a %s build for CUDA <= %s", driverNeedSuffix(fc), fw.Name, dc)
	if fMajor > dMajor {
		v := frameworkVerdict{status: Error, remedy: remedy, message: fmt.Sprintf(
			"%s is built for CUDA %s but %s supports CUDA <= %s, and minor-version compatibility does not cross CUDA major versions%s",
			name, fc, drv, dc, need)}
		return forwardCompatVerdict(in, fc, v)
	}
	floor, mvc := compat.MVCFloor(fMajor)
	if mvc && d.Version != "" && version.AtLeast(d.Version, floor) {
		return frameworkVerdict{status: Warn, message: fmt.Sprintf(
			"%s is built for CUDA %s and runs on %s (CUDA %s) only through minor-version compatibility "+
				"(driver >= %s): APIs newer than CUDA %s fail with cudaErrorCallRequiresNewerDriver, "+
				"and PTX from CUDA %s cannot be JIT-compiled%s",
			name, fc, drv, dc, floor, dc, fc, need),
			remedy: fmt.Sprintf("upgrade the host driver%s for full CUDA %s support, or install a %s build for CUDA <= %s",
				driverNeedSuffix(fc), fc, fw.Name, dc)}
	}
	why := fmt.Sprintf("CUDA %d.x has no minor-version compatibility", fMajor)
	if mvc {
		why = fmt.Sprintf("minor-version compatibility for CUDA %d.x needs driver >= %s", fMajor, floor)
	}
	v := frameworkVerdict{status: Error, remedy: remedy, message: fmt.Sprintf(
		"%s is built for CUDA %s but %s supports CUDA <= %s, and %s%s", name, fc, drv, dc, why, need)}
	return forwardCompatVerdict(in, fc, v)
}

func driverLabel(d facts.Driver) string {
	if d.Version == "" {
		return "the driver"
	}
	return "driver " + d.Version
}

// minDriverClause is ": CUDA 12.1 needs driver >= 530.30.02", or "" when
// the table does not know cuda.
func minDriverClause(cuda string) string {
	if min, ok := compat.MinDriver(cuda); ok {
		return fmt.Sprintf(": CUDA %s needs driver >= %s", cuda, min)
	}
	return ""
}

func driverNeedSuffix(cuda string) string {
	if min, ok := compat.MinDriver(cuda); ok {
		return " to >= " + min
	}
	return ""
}

// forwardCompatVerdict downgrades an error to a warning when CUDA forward
// compatibility lets the host run cuda, by the cuda-driver check's rules
// (usableCompat, brandSupport), so both checks agree.
func forwardCompatVerdict(in Input, cuda string, v frameworkVerdict) frameworkVerdict {
	host := in.Facts.Host.Driver.Version
	if host == "" || brandSupport(in.Visible) != compat.Supported {
		return v
	}
	lib, ok := usableCompat(in.Facts.Container.Compat, host, cuda)
	if !ok {
		return v
	}
	lc, _ := compat.DriverCUDA(lib.DriverVersion)
	return frameworkVerdict{status: Warn, message: v.message + fmt.Sprintf(
		"; it can run through the image's forward-compatibility libcuda %s (driver %s, CUDA %s) on these data-center GPUs",
		lib.Path, lib.DriverVersion, lc),
		remedy: "make sure the compat library is loaded (ldconfig or LD_LIBRARY_PATH) and the host driver branch is one forward compatibility supports, or " + v.remedy}
}

// toolkitMajorVerdict warns when the framework's CUDA major differs from the
// toolkit's: the framework then loads its own CUDA (pip nvidia-* wheels).
func toolkitMajorVerdict(in Input, fw facts.Framework) (frameworkVerdict, bool) {
	tc := version.Prefix(in.Facts.Container.CUDA.Version, 2)
	if tc == "" {
		return frameworkVerdict{}, false
	}
	fc := version.Prefix(fw.CUDAVersion, 2)
	if version.Major(tc) == version.Major(fc) {
		return frameworkVerdict{status: Pass, message: fmt.Sprintf("%s (CUDA %s) matches the image's CUDA %s", frameworkLabel(fw), fc, tc)}, true
	}
	return frameworkVerdict{status: Warn, message: fmt.Sprintf(
		"%s is built for CUDA %s but the image's CUDA toolkit is %s: a different major version, "+
			"so the framework must bring its own CUDA runtime libraries", frameworkLabel(fw), fc, tc),
		remedy: fmt.Sprintf("use a base image with CUDA %d.x, or install a %s build for CUDA %d.x",
			version.Major(fc), fw.Name, version.Major(tc))}, true
}
