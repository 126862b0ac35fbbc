package image

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/compat"
	"github.com/gpu-preflight/gpu-preflight/preflight/gpuarch"
	"github.com/gpu-preflight/gpu-preflight/preflight/pyenv"
)

// The parsers in this file are pure: bytes or names in, facts out. The
// scanner (scan.go) does the reading. Formats and examples are from
// docs/sources.md, "Framework build info on disk".

// torchVersion is what torch/version.py records.
type torchVersion struct {
	// Version is __version__, "2.1.0+cu118".
	Version string
	// CUDA is the CUDA the wheel was built with, "11.8"; empty for a CPU
	// or ROCm build (cuda = None).
	CUDA string
	// HIP is the ROCm HIP version of a ROCm build.
	HIP string
}

// parseTorchVersion reads torch/version.py, which
// tools/generate_torch_version.py writes as
//
//	__version__ = '2.1.0+cu118'
//	debug = False
//	cuda: Optional[str] = '11.8'
//	git_version = '<sha>'
//	hip: Optional[str] = None
func parseTorchVersion(src []byte) (torchVersion, error) {
	f := pyenv.ModuleAssignments(src)
	var v torchVersion
	var err error
	if v.Version, err = versionString(f, "__version__", "torch version.py"); err != nil {
		return torchVersion{}, err
	}
	v.CUDA, _ = f["cuda"].Str()
	v.HIP, _ = f["hip"].Str()
	return v, nil
}

// versionString returns the string assigned to name in a version file's
// assignments f: a file without it, or with an empty one, records no
// version, and the error says so, naming the file as what.
func versionString(f map[string]pyenv.Literal, name, what string) (string, error) {
	if s, ok := f[name].Str(); ok && s != "" {
		return s, nil
	}
	return "", fmt.Errorf("%s: no %s string", what, name)
}

// paddleVersion is what paddle/version/__init__.py (paddle/version.py
// before 2.5) records.
type paddleVersion struct {
	// Version is full_version, "2.6.0".
	Version string
	// CUDA is cuda_version, "11.8"; empty for a CPU build, which writes
	// the string 'False'. Releases before 2.2 do not record it.
	CUDA string
	// CUDARecorded is true when the file records cuda_version at all, so
	// that an empty CUDA means a CPU build rather than an old release.
	CUDARecorded bool
	// CuDNN is cudnn_version, "8.6.0".
	CuDNN string
	// Archs is compiled_cuda_archs (3.x) as targets, [86] -> ["sm_86"].
	Archs []string
}

// parsePaddleVersion reads the module Paddle's setup.py generates
// (write_version_py): full_version = '2.6.0', cuda_version = '11.8',
// cudnn_version = '8.6.0', and from 3.x compiled_cuda_archs = [86].
func parsePaddleVersion(src []byte) (paddleVersion, error) {
	f := pyenv.ModuleAssignments(src)
	var v paddleVersion
	var err error
	if v.Version, err = versionString(f, "full_version", "paddle version file"); err != nil {
		return paddleVersion{}, err
	}
	v.CUDA = paddleFlag(f["cuda_version"])
	_, v.CUDARecorded = f["cuda_version"]
	v.CuDNN = paddleFlag(f["cudnn_version"])
	v.Archs = archList(f["compiled_cuda_archs"])
	return v, nil
}

// archList reads a Python list of GPU targets (Paddle's [80, 86], TF's
// ['sm_70', 'compute_80']) into canonical arch names, skipping what is not
// one.
func archList(a pyenv.Literal) []string {
	var out []string
	for _, it := range a.Items() {
		s, ok := it.Scalar()
		if !ok {
			continue
		}
		if arch, err := gpuarch.Parse(s); err == nil {
			out = append(out, arch.String())
		}
	}
	return out
}

// paddleFlag returns a version field Paddle writes as a string, where a
// build without the component writes 'False' (or 'OFF').
func paddleFlag(v pyenv.Literal) string {
	s, _ := v.Scalar()
	switch strings.ToLower(s) {
	case "false", "off", "none", "0":
		return ""
	}
	return s
}

// tfBuildInfo is what tensorflow/python/platform/build_info.py records.
type tfBuildInfo struct {
	// CUDA is cuda_version, "12.1"; empty for a CPU build.
	CUDA string
	// CuDNN is cudnn_version, the major only: "8".
	CuDNN string
	// Archs is cuda_compute_capabilities: "sm_80", "compute_90".
	Archs []string
	// CUDABuild is is_cuda_build; ROCmBuild is is_rocm_build.
	CUDABuild, ROCmBuild bool
}

// parseTFBuildInfo reads the module tensorflow/tools/build_info/
// gen_build_info.py writes:
//
//	build_info = collections.OrderedDict([('cpu_compiler', '/usr/bin/gcc'),
//	  ('cuda_compute_capabilities', ['sm_35', 'sm_50', 'compute_80']),
//	  ('cuda_version', '11.2'), ('cudnn_version', '8'),
//	  ('is_cuda_build', True), ('is_rocm_build', False), ...])
//
// Module-level assignments of the same keys are read too.
func parseTFBuildInfo(src []byte) (tfBuildInfo, error) {
	f := buildInfoFields(src)
	_, hasBuild := f["is_cuda_build"]
	_, hasCUDA := f["cuda_version"]
	if !hasBuild && !hasCUDA {
		return tfBuildInfo{}, errors.New("tensorflow build_info.py: neither is_cuda_build nor cuda_version is recorded")
	}
	var v tfBuildInfo
	v.CUDABuild = f["is_cuda_build"].True()
	v.ROCmBuild = f["is_rocm_build"].True()
	v.CUDA, _ = f["cuda_version"].Scalar()
	v.CuDNN, _ = f["cudnn_version"].Scalar()
	v.Archs = archList(f["cuda_compute_capabilities"])
	// A CPU build records cuda_version as '' or leaves it out; Windows
	// builds write '64_112'. Only a dotted version is a CUDA version.
	if !dotted(v.CUDA) {
		v.CUDA = ""
	}
	return v, nil
}

// buildInfoFields merges a build-info module's two spellings: module-level
// assignments, and the pairs of a mapping assigned to a name
// (build_info = collections.OrderedDict([(key, value), ...])).
func buildInfoFields(src []byte) map[string]pyenv.Literal {
	out := map[string]pyenv.Literal{}
	for name, v := range pyenv.ModuleAssignments(src) {
		out[name] = v
		for k, kv := range v.Pairs() {
			if _, set := out[k]; !set {
				out[k] = kv
			}
		}
	}
	return out
}

// distInfo is one installed Python distribution, from its metadata
// directory name ("torch-2.1.0+cu118.dist-info").
type distInfo struct {
	// Name is the project name normalized as in directory names: lower
	// case, runs of "-", "_" and "." folded to "_": "nvidia_cudnn_cu12".
	Name    string
	Version string
	// site and entry are the directory the metadata was listed in and its
	// name there (set by the scanner; they share the listing's strings, so
	// that a site-packages of 50 000 distributions costs no string each).
	site, entry string
}

// Dir is the metadata directory's path; "" from parseDistInfoName.
func (d distInfo) dir() string {
	if d.site == "" {
		return ""
	}
	return path.Join(d.site, d.entry)
}

// parseDistInfoName splits a "<name>-<version>.dist-info",
// "<name>-<version>[-pyX.Y].egg-info" or
// "<name>-<version>-pyX.Y[-<platform>].egg" directory name.
func parseDistInfoName(dir string) (distInfo, bool) {
	base, ok := strings.CutSuffix(dir, ".dist-info")
	egg := false
	if !ok {
		if base, ok = strings.CutSuffix(dir, ".egg-info"); !ok {
			if base, ok = strings.CutSuffix(dir, ".egg"); !ok {
				return distInfo{}, false
			}
		}
		egg = true
	}
	name, ver, ok := strings.Cut(base, "-")
	if !ok || name == "" || ver == "" {
		return distInfo{}, false
	}
	if egg {
		if i := strings.Index(ver, "-py"); i > 0 {
			ver = ver[:i]
		}
	}
	if ver == "" || !isDigit(ver[0]) {
		return distInfo{}, false
	}
	// A name of separators alone (".-0.dist-info") normalizes to nothing:
	// not a distribution.
	norm := normalizeName(name)
	if norm == "" {
		return distInfo{}, false
	}
	return distInfo{Name: norm, Version: ver}, true
}

// normalizeName folds a Python project name the way wheel directory names
// spell it (PEP 503 with "_"): "nvidia-cudnn-cu12" -> "nvidia_cudnn_cu12".
func normalizeName(name string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(name) {
		if r == '-' || r == '_' || r == '.' {
			sep = true
			continue
		}
		if sep && b.Len() > 0 {
			b.WriteByte('_')
		}
		sep = false
		b.WriteRune(r)
	}
	return b.String()
}

// localCUDA returns the CUDA version a wheel's local version tag names:
// "2.1.0+cu118" -> "11.8", "2.5.1+cu124" -> "12.4". The last digit is the
// minor version. It returns "" when there is no +cuNNN tag.
func localCUDA(version string) string {
	_, local, ok := strings.Cut(version, "+")
	if !ok {
		return ""
	}
	for _, part := range strings.FieldsFunc(local, func(r rune) bool { return r == '.' || r == '_' || r == '-' }) {
		if n, ok := strings.CutPrefix(part, "cu"); ok && digitsOnly(n) {
			return cudaFromDigits(n)
		}
	}
	return ""
}

// paddlePostCUDA returns the CUDA version of a PaddlePaddle 2.x wheel's
// ".postNNN" release ("2.6.0.post118" -> "11.8", ".post120" -> "12.0").
// Releases before 2.0 used the tag for CUDA and cuDNN together
// (".post107" = CUDA 10.0 + cuDNN 7), so a result is accepted only when it
// is a CUDA toolkit release the compatibility tables know.
func paddlePostCUDA(version string) string {
	i := strings.LastIndex(version, ".post")
	if i < 0 {
		return ""
	}
	n := version[i+len(".post"):]
	if !digitsOnly(n) {
		return ""
	}
	cuda := cudaFromDigits(n)
	if _, known := compat.MinDriver(cuda); !known {
		return ""
	}
	return cuda
}

// jaxlibTag is the build flavour in an older jaxlib's local version tag.
type jaxlibTag struct {
	// CUDA is "12" for "+cuda12", "11.1" for the older "+cuda111".
	CUDA string
	// CuDNN is "8.9" for "cudnn89", "8.0.5" for "cudnn805".
	CuDNN string
}

// parseJaxlibVersion reads the flavour of a jaxlib version such as
// "0.4.28+cuda12.cudnn89" or "0.1.75+cuda111". ok is false without a
// cuda tag.
func parseJaxlibVersion(version string) (jaxlibTag, bool) {
	_, local, found := strings.Cut(version, "+")
	if !found {
		return jaxlibTag{}, false
	}
	var t jaxlibTag
	for _, part := range strings.Split(local, ".") {
		switch {
		case strings.HasPrefix(part, "cudnn"):
			n := part[len("cudnn"):]
			if digitsOnly(n) && len(n) >= 2 {
				t.CuDNN = n[:1] + "." + n[1:2]
				if len(n) > 2 {
					t.CuDNN += "." + n[2:]
				}
			}
		case strings.HasPrefix(part, "cuda"):
			n := part[len("cuda"):]
			switch {
			case !digitsOnly(n):
			case len(n) <= 2:
				t.CUDA = strings.TrimLeft(n, "0")
			default:
				t.CUDA = cudaFromDigits(n)
			}
		}
	}
	return t, t.CUDA != ""
}

// cudaFromDigits reads the packed "118" of cu118 / post118 as "11.8": the
// last digit is the minor version.
func cudaFromDigits(n string) string {
	if len(n) < 2 {
		return ""
	}
	major := strings.TrimLeft(n[:len(n)-1], "0")
	if major == "" {
		return ""
	}
	return major + "." + n[len(n)-1:]
}

// envVersion cleans a version from an image environment variable: the
// Debian package revision and build suffix go ("2.25.1-1" -> "2.25.1",
// "9.8.0.87-1" -> "9.8.0.87", "2.19.3+cuda12.2" -> "2.19.3"). It returns ""
// when what is left is not a dotted number.
func envVersion(v string) string {
	v = strings.TrimSpace(v)
	if i := strings.IndexAny(v, "-+~ "); i >= 0 {
		v = v[:i]
	}
	if !dotted(v) && !digitsOnly(v) {
		return ""
	}
	return v
}

// parseDefines returns the object-like macros a C header defines:
// "#define CUDNN_MAJOR 8" -> CUDNN_MAJOR: "8". Comments after the value and
// enclosing parentheses are removed; function-like macros are skipped.
func parseDefines(src []byte) map[string]string {
	out := map[string]string{}
	for line := range bytes.Lines(src) {
		s := strings.TrimSpace(string(line))
		rest, ok := strings.CutPrefix(s, "#")
		if !ok {
			continue
		}
		rest, ok = strings.CutPrefix(strings.TrimLeft(rest, " \t"), "define")
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '\t') {
			continue
		}
		rest = strings.TrimLeft(rest, " \t")
		end := strings.IndexFunc(rest, func(r rune) bool { return !isIdentRune(r) })
		name := rest
		if end >= 0 {
			name, rest = rest[:end], rest[end:]
		} else {
			rest = ""
		}
		if name == "" || strings.HasPrefix(rest, "(") {
			continue
		}
		if i := strings.Index(rest, "//"); i >= 0 {
			rest = rest[:i]
		}
		if i := strings.Index(rest, "/*"); i >= 0 {
			rest = rest[:i]
		}
		val := strings.TrimSpace(rest)
		for len(val) >= 2 && val[0] == '(' && val[len(val)-1] == ')' {
			val = strings.TrimSpace(val[1 : len(val)-1])
		}
		out[name] = val
	}
	return out
}

func isIdentRune(r rune) bool {
	return r == '_' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
}

// defineNumber resolves macro name to a decimal number, following macros
// that expand to another macro's name (TensorRT 10 defines
// NV_TENSORRT_MAJOR as TRT_MAJOR_ENTERPRISE).
func defineNumber(defs map[string]string, name string) (string, bool) {
	for range 8 {
		v, ok := defs[name]
		if !ok {
			return "", false
		}
		v = strings.TrimRight(v, "uUlL")
		if digitsOnly(v) {
			n, err := strconv.ParseUint(v, 10, 32)
			if err != nil {
				return "", false
			}
			return strconv.FormatUint(n, 10), true
		}
		name = v
	}
	return "", false
}

// headerVersion joins the numbers of the named macros with dots; every
// macro must resolve.
func headerVersion(src []byte, names ...string) (string, bool) {
	defs := parseDefines(src)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		v, ok := defineNumber(defs, n)
		if !ok {
			return "", false
		}
		parts = append(parts, v)
	}
	return strings.Join(parts, "."), true
}

// parseCuDNNHeader reads CUDNN_MAJOR, CUDNN_MINOR and CUDNN_PATCHLEVEL from
// cudnn_version.h (cuDNN 8 and later) or cudnn.h (cuDNN 7 and earlier).
func parseCuDNNHeader(src []byte) (string, bool) {
	return headerVersion(src, "CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL")
}

// parseNCCLHeader reads NCCL_MAJOR, NCCL_MINOR and NCCL_PATCH from nccl.h.
func parseNCCLHeader(src []byte) (string, bool) {
	return headerVersion(src, "NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH")
}

// parseTensorRTHeader reads NV_TENSORRT_MAJOR, _MINOR and _PATCH from
// NvInferVersion.h.
func parseTensorRTHeader(src []byte) (string, bool) {
	return headerVersion(src, "NV_TENSORRT_MAJOR", "NV_TENSORRT_MINOR", "NV_TENSORRT_PATCH")
}

// sonameVersion returns the version a library file name carries after
// base: sonameVersion("libcudnn.so.8.9.7", "libcudnn.so") = "8.9.7". A
// name with only the major ("libnccl.so.2") gives "2".
func sonameVersion(file, base string) (string, bool) {
	v, ok := strings.CutPrefix(file, base+".")
	if !ok || !(dotted(v) || digitsOnly(v)) {
		return "", false
	}
	return v, true
}

// dotted reports whether s is two or more dot-separated decimal numbers.
func dotted(s string) bool {
	parts := strings.Split(s, ".")
	return len(parts) >= 2 && !slices.ContainsFunc(parts, func(p string) bool { return !digitsOnly(p) })
}

// digitsOnly reports whether s is one or more ASCII digits.
func digitsOnly(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// majorMinor trims a version to major.minor ("11.8.89" -> "11.8").
func majorMinor(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}

// requirement is one Requires-Dist line of a wheel's METADATA reduced to
// what the CUDA stack check needs: the distribution and the version it is
// pinned to (==) or must be at least (>=, ~=).
type requirement struct {
	// Name is normalized, "nvidia_cudnn_cu12".
	Name string
	// Op is "==" or ">="; ~= counts as >=.
	Op      string
	Version string
}

// parseRequiresDist reads the Requires-Dist headers of a METADATA file
// (core metadata 2.1, PEP 508 requirements), before the first blank line:
//
//	Requires-Dist: nvidia-cudnn-cu12==9.1.0.70; platform_system == "Linux"
//	Requires-Dist: nvidia-cudnn-cu12<10.0,>=9.1; extra == "with-cuda"
//	Requires-Dist: nvidia-nccl-cu12 (==2.18.1)
//
// A requirement without a lower bound (only <, !=, or none) is left out.
func parseRequiresDist(src []byte) []requirement {
	var out []requirement
	metadataHeaders(src, func(k, v string) {
		if k != "requires-dist" {
			return
		}
		if r, ok := parseRequirement(v); ok {
			out = append(out, r)
		}
	})
	return out
}

// metadataHeaders calls f with each "Key: value" header of a METADATA or
// PKG-INFO file, the key trimmed and lower-cased; the headers end at the
// first blank line, where the description begins.
func metadataHeaders(src []byte, f func(key, value string)) {
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			return
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			f(strings.ToLower(strings.TrimSpace(k)), v)
		}
	}
}

// parseRequirement reads "name[extras] (specifiers) ; marker".
func parseRequirement(s string) (requirement, bool) {
	s, _, _ = strings.Cut(s, ";")
	s = strings.TrimSpace(s)
	end := strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z')
	})
	name, rest := s, ""
	if end >= 0 {
		name, rest = s[:end], s[end:]
	}
	if name == "" {
		return requirement{}, false
	}
	if i := strings.IndexByte(rest, ']'); strings.HasPrefix(strings.TrimSpace(rest), "[") && i >= 0 {
		rest = rest[i+1:]
	}
	rest = strings.Trim(strings.TrimSpace(rest), "()")
	r := requirement{Name: normalizeName(name)}
	for spec := range strings.SplitSeq(rest, ",") {
		spec = strings.TrimSpace(spec)
		for _, op := range []string{"===", "==", ">=", "~="} {
			v, ok := strings.CutPrefix(spec, op)
			if !ok {
				continue
			}
			v = strings.TrimSpace(v)
			if v == "" || !isDigit(v[0]) || strings.ContainsAny(v, "*") {
				break
			}
			switch op {
			case "===", "==":
				return requirement{Name: r.Name, Op: "==", Version: v}, true
			default:
				r.Op, r.Version = ">=", v
			}
			break
		}
	}
	return r, r.Version != ""
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
