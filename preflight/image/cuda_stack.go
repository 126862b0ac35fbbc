package image

import (
	"bytes"
	"path"
	"strconv"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/pyenv"
)

// includeDirs hold the version headers. /usr/include/cudnn_version.h is
// an alternatives link to the multiarch cudnn_version_v9.h (docs/sources.md, "Driver and toolkit tables").
var includeDirs = []string{
	"/usr/include",
	"/usr/include/x86_64-linux-gnu",
	"/usr/include/aarch64-linux-gnu",
	"/usr/local/cuda/include",
	"/usr/local/cuda/targets/x86_64-linux/include",
	"/usr/local/cuda/targets/sbsa-linux/include",
	"/usr/local/tensorrt/include",
	"/opt/tensorrt/include",
}

// Ranks of version sources, best first: a header states the full version,
// a library file name usually does, a wheel's dist-info names the
// release, an environment variable describes what the image's author
// meant to install, and a bare "libnccl.so.2" only gives the major.
const (
	rankHeader = iota
	rankLibFull
	rankDistInfo
	rankPipHeader
	rankPipLibFull
	rankEnv
	rankLibMajor
	rankNone
)

// component collects the best version seen for one library.
type component struct {
	facts.Component
	rank int
}

func newComponent() component { return component{rank: rankNone} }

// offer keeps v when it comes from a better source than what is held.
func (c *component) offer(rank int, v, source string) {
	if v == "" || rank >= c.rank {
		return
	}
	c.rank = rank
	c.Component = facts.Component{Version: v, Source: source}
}

// stackLib describes how to find one component.
type stackLib struct {
	soname  string   // "libcudnn.so"
	headers []string // header file names or path.Match patterns
	parse   func([]byte) (string, bool)
	dists   []string // pip distributions, normalized
	pipDirs []string // under site-packages/nvidia (or elsewhere): lib and include parents
	conda   []string // conda packages shipping it into a prefix's lib
	envs    []string // variables stating the version, best first (envvars.VersionOf)
}

var (
	cudnnLib = stackLib{
		soname:  "libcudnn.so",
		headers: []string{"cudnn_version.h", "cudnn_version_v*.h", "cudnn.h"},
		parse:   parseCuDNNHeader,
		dists:   wheelDists("cudnn"),
		pipDirs: wheelHomes("cudnn"),
		conda:   []string{"cudnn", "libcudnn"},
		envs:    envvars.VersionOf(envvars.CuDNN),
	}
	ncclLib = stackLib{
		soname:  "libnccl.so",
		headers: []string{"nccl.h"},
		parse:   parseNCCLHeader,
		dists:   wheelDists("nccl"),
		pipDirs: wheelHomes("nccl"),
		conda:   []string{"nccl"},
		envs:    envvars.VersionOf(envvars.NCCL),
	}
	tensorRTLib = stackLib{
		soname:  "libnvinfer.so",
		headers: []string{"NvInferVersion.h"},
		parse:   parseTensorRTHeader,
		dists: []string{
			"tensorrt_cu13_libs", "tensorrt_cu12_libs", "tensorrt_libs",
			"tensorrt_cu13", "tensorrt_cu12", "tensorrt",
		},
		pipDirs: []string{"tensorrt_libs", "tensorrt"},
	}
)

// stack fills s.res.Stack.
func (s *scanner) stack() {
	dirs := append([]string(nil), libDirs...)
	ld, w := searchPath(s.env, "LD_LIBRARY_PATH")
	if w != "" {
		s.warnings = append(s.warnings, w)
	}
	dirs = append(dirs, ld...)
	s.res.Stack.CuDNN = s.component(cudnnLib, dirs)
	s.res.Stack.NCCL = s.component(ncclLib, dirs)
	s.res.Stack.TensorRT = s.component(tensorRTLib, dirs)
}

func (s *scanner) component(lib stackLib, dirs []string) facts.Component {
	c := newComponent()
	for _, dir := range includeDirs {
		s.headerIn(&c, lib, dir, rankHeader)
	}
	for _, dir := range dirs {
		s.libIn(&c, lib, dir, rankLibFull)
	}
	for _, sp := range s.res.SitePackages {
		if d, ok := firstDist(s.distInfos(sp), lib.dists...); ok {
			c.offer(rankDistInfo, d.Version, path.Join(sp, d.Name+"-"+d.Version+".dist-info"))
		}
		for _, pd := range lib.pipDirs {
			s.headerIn(&c, lib, path.Join(sp, pd, "include"), rankPipHeader)
			s.libIn(&c, lib, path.Join(sp, pd, "lib"), rankPipLibFull)
			s.libIn(&c, lib, path.Join(sp, pd), rankPipLibFull)
		}
	}
	for _, e := range s.res.Environments {
		if e.Kind != pyenv.KindConda || len(lib.conda) == 0 {
			continue
		}
		// A conda prefix's lib is on its packages' RUNPATH ($ORIGIN/../lib).
		if v, src, ok := s.condaPackage(e.Prefix, lib.conda); ok {
			c.offer(rankDistInfo, v, src)
		}
		s.headerIn(&c, lib, path.Join(e.Prefix, "include"), rankPipHeader)
		s.libIn(&c, lib, path.Join(e.Prefix, "lib"), rankPipLibFull)
	}
	for _, k := range lib.envs {
		if v, set := s.env[k]; set {
			c.offer(rankEnv, envVersion(v), facts.ComponentFromEnv+k)
		}
	}
	return c.Component
}

// headerIn offers the version in the first of lib's headers found in dir.
func (s *scanner) headerIn(c *component, lib stackLib, dir string, rank int) {
	if rank >= c.rank {
		return
	}
	names := s.list(dir)
	for _, pat := range lib.headers {
		for _, n := range names {
			if ok, _ := path.Match(pat, n); !ok {
				continue
			}
			p := path.Join(dir, n)
			if v, ok := lib.parse(s.read(p)); ok {
				c.offer(rank, v, p)
				return
			}
		}
	}
}

// libIn offers the version of the library file with the longest version
// in dir ("libcudnn.so.8.9.7" over the "libcudnn.so.8" link).
func (s *scanner) libIn(c *component, lib stackLib, dir string, rank int) {
	best, bestPath := "", ""
	for _, n := range s.list(dir) {
		v, ok := sonameVersion(n, lib.soname)
		if ok && components(v) > components(best) {
			best, bestPath = v, path.Join(dir, n)
		}
	}
	if best == "" {
		return
	}
	if !strings.Contains(best, ".") {
		rank = rankLibMajor
	}
	c.offer(rank, best, bestPath)
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
