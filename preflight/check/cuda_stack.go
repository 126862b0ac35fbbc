package check

import (
	"fmt"
	"path"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/version"
)

// CUDAStack is the `cuda-stack` check: for each CUDA library a framework
// loads, the copy glibc's loader takes first (docs/cuda-stack.md) is not
// older than the one the framework was built against (an error: the import
// fails or the library refuses). A second version present is a warning, a
// mixed stack one LD_LIBRARY_PATH change turns into the error; so is no copy.
var CUDAStack = Check{ID: "cuda-stack", rule: cudaStack}

func cudaStack(in Input) Finding {
	f := Finding{}
	libs := judgedLibraries(in.Facts.Container)
	sources, disagree := cudaSourcesVerdict(in.Facts.Container.CUDA)
	if len(libs) == 0 {
		if disagree {
			return combineVerdicts([]frameworkVerdict{sources})
		}
		f.Status = Skip
		f.Message = "no CUDA library loaded by a framework's CUDA build was found to follow"
		return f
	}
	var verdicts []frameworkVerdict
	if disagree {
		verdicts = append(verdicts, sources)
	}
	var fine []string
	for _, l := range libs {
		v, ok := stackVerdict(l)
		if ok {
			verdicts = append(verdicts, v)
			continue
		}
		fine = append(fine, fmt.Sprintf("%s %s (%s)", l.Name, versionText(l.Loaded.Version), l.Loaded.Path))
	}
	if len(verdicts) == 0 {
		f.Status = Pass
		f.Message = "one copy of each CUDA library loads first, as built: " + strings.Join(fine, ", ") + minorSourcesNote(in.Facts.Container.CUDA)
		return f
	}
	return combineVerdicts(verdicts)
}

// judgedLibraries are the CUDA libraries of the judged frameworks (all of
// them in facts that do not say which framework loads them).
func judgedLibraries(c facts.Container) []facts.CUDALibrary {
	judged := map[string]bool{}
	for _, fw := range c.Judged() {
		judged[fw.Location] = true
	}
	var out []facts.CUDALibrary
	for _, l := range c.CUDALibraries {
		if l.FrameworkLocation == "" || judged[l.FrameworkLocation] {
			out = append(out, l)
		}
	}
	return out
}

// cudaSourcesVerdict warns when another source of the image's CUDA
// (facts.CUDAToolkit.Others) names a different major: the toolkit then
// serves another CUDA than the job runs.
func cudaSourcesVerdict(img facts.CUDAToolkit) (frameworkVerdict, bool) {
	if img.Version == "" {
		return frameworkVerdict{}, false
	}
	var others []string
	for _, o := range img.Others {
		if o.Version != "" && version.Major(o.Version) != version.Major(img.Version) {
			others = append(others, fmt.Sprintf("%s says %s (%s)", o.Kind, o.Version, o.Source))
		}
	}
	if len(others) == 0 {
		return frameworkVerdict{}, false
	}
	return frameworkVerdict{status: Warn,
		message: fmt.Sprintf("the image's CUDA is %s, from %s (%s), but %s", img.Version, img.Kind, img.Source, strings.Join(others, "; ")),
		remedy:  "keep one CUDA major in the image: a toolkit, distribution package or CUDA_VERSION of another major than the runtime the framework loads serves extensions built in the image (nvcc, headers) with the wrong CUDA",
	}, true
}

// minorSourcesNote names the sources that state another minor of the same
// major: harmless under minor-version compatibility, but worth saying.
func minorSourcesNote(img facts.CUDAToolkit) string {
	var others []string
	for _, o := range img.Others {
		if o.Version != "" && o.Version != img.Version {
			others = append(others, fmt.Sprintf("%s says %s (%s)", o.Kind, o.Version, o.Source))
		}
	}
	if len(others) == 0 {
		return ""
	}
	return fmt.Sprintf("; the image's CUDA is %s, from %s (%s); %s", img.Version, img.Kind, img.Source, strings.Join(others, "; "))
}

// stackVerdict judges one library; ok is false when there is nothing to say.
func stackVerdict(l facts.CUDALibrary) (frameworkVerdict, bool) {
	who := l.Framework
	if l.Loaded.Path == "" {
		return frameworkVerdict{status: Warn,
			message: fmt.Sprintf("%s needs %s and the loader finds it nowhere in the image", who, l.Name),
			remedy:  installHint(l, l.BuiltFor),
		}, true
	}
	loaded := fmt.Sprintf("%s %s from %s (%s)", l.Name, versionText(l.Loaded.Version), l.Loaded.Path, viaText(l.Loaded))
	if l.BuiltFor != "" && l.Loaded.Version != "" && olderThan(l.Loaded.Version, l.BuiltFor) {
		msg := fmt.Sprintf("%s loads %s, older than the %s it was built against (%s)", who, loaded, l.BuiltFor, l.BuiltForSource)
		if own := newestOther(l, l.BuiltFor); own != nil {
			msg += fmt.Sprintf("; the copy it was built for, %s, is at %s", own.Version, own.Path)
		}
		return frameworkVerdict{status: Error, message: msg, remedy: fixOrder(l, l.BuiltFor)}, true
	}
	var others []string
	for _, o := range l.Others {
		if o.Version == "" || o.Version == l.Loaded.Version || l.Loaded.Version == "" {
			continue
		}
		others = append(others, fmt.Sprintf("%s at %s", o.Version, o.Path))
	}
	if len(others) > 0 {
		return frameworkVerdict{status: Warn,
			message: fmt.Sprintf("%s loads %s, and the image holds another %s: %s", who, loaded, l.Library, strings.Join(others, ", ")),
			remedy:  "keep one CUDA stack: remove the copies the framework does not load, or keep them out of LD_LIBRARY_PATH and /etc/ld.so.conf.d, so that no change of search order can pick them",
		}, true
	}
	return frameworkVerdict{}, false
}

func fixOrder(l facts.CUDALibrary, need string) string {
	dir := path.Dir(l.Loaded.Path)
	switch l.Loaded.Via {
	case "LD_LIBRARY_PATH":
		return fmt.Sprintf("take %s out of LD_LIBRARY_PATH (it is searched before the framework's DT_RUNPATH), or replace the %s there with %s or newer", dir, l.Library, need)
	case "ld.so.cache", "system directory":
		return fmt.Sprintf("the framework's own search path has no %s, so the system's copy in %s loads: %s, or upgrade the system's %s to %s or newer", l.Name, dir, installHint(l, need), l.Library, need)
	}
	return fmt.Sprintf("replace %s with %s or newer (%s)", l.Loaded.Path, need, installHint(l, need))
}

func installHint(l facts.CUDALibrary, need string) string {
	if l.Wheel == "" {
		return "install the " + l.Library + " the framework was built for"
	}
	if need == "" {
		return "pip install " + l.Wheel
	}
	return fmt.Sprintf("pip install '%s==%s'", l.Wheel, need)
}

// newestOther is the newest other copy at least need, if any.
func newestOther(l facts.CUDALibrary, need string) *facts.LibraryCopy {
	var best *facts.LibraryCopy
	for i, o := range l.Others {
		if o.Version == "" || olderThan(o.Version, need) {
			continue
		}
		if best == nil || olderThan(best.Version, o.Version) {
			best = &l.Others[i]
		}
	}
	return best
}

// olderThan compares on the components both give: "9.1" is not older than
// "9.1.0.70", nor "12" than "12.4"; "8" is older than "9.1".
func olderThan(have, need string) bool {
	if !version.Valid(have) || !version.Valid(need) {
		return false
	}
	n := min(strings.Count(have, ".")+1, strings.Count(need, ".")+1)
	a, b := version.Prefix(have, n), version.Prefix(need, n)
	c, err := version.Compare(a, b)
	return err == nil && c < 0
}

func viaText(c facts.LibraryCopy) string {
	switch c.Via {
	case "DT_RPATH", "DT_RUNPATH":
		return c.Via + " of " + c.ViaObject
	case "preloaded":
		return "preloaded by the framework from sys.path"
	case "":
		return "not on the search path"
	}
	return c.Via
}

func versionText(v string) string {
	if v == "" {
		return "(version unknown)"
	}
	return v
}
