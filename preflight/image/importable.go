package image

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/pyenv"
)

// maxWheelFile bounds a dist-info's WHEEL file; real ones are a few lines.
const maxWheelFile = 64 << 10

// importability records whether a Python can import fw from its package
// directory pkgDir: the package needs an __init__, an extension module or
// its version file (markers; with none, the directory itself), which an
// uninstall over another wheel removes; its extension modules' or wheel's
// tags name the CPython ABIs that can load it.
func (s *scanner) importability(fw *facts.Framework, pkgDir string, markers []string, d distInfo, hasDist bool) {
	names := s.list(pkgDir)
	var exts []string
	for _, n := range names {
		if tag, ok := extensionABI(n); ok {
			exts = append(exts, tag)
			if fw.ABISource == "" {
				fw.ABISource = path.Join(pkgDir, n)
			}
		}
	}
	switch {
	case markers == nil && s.root.IsDir(pkgDir):
	case len(names) == 0 && hasDist:
		fw.NotImportable = fmt.Sprintf("%s names %s, which is not there: an orphaned dist-info", distPath("", d), pkgDir)
		return
	case markers != nil && !hasInit(names) && len(exts) == 0 && !slices.ContainsFunc(markers, func(m string) bool { _, ok := slices.BinarySearch(names, m); return ok }):
		fw.NotImportable = pkgDir + " has neither __init__.py nor " + strings.Join(markers, " nor ") + ": the framework's files are gone (uninstalling one wheel installed over another leaves this)"
		return
	}
	slices.Sort(exts)
	fw.ABI = slices.Compact(exts)
	if len(fw.ABI) == 0 && hasDist && d.dir() != "" {
		p := path.Join(d.dir(), "WHEEL")
		if tags := parseWheelABI(s.readMax(p, maxWheelFile)); len(tags) > 0 {
			fw.ABI, fw.ABISource = tags, p
		}
	}
	if len(fw.ABI) == 0 {
		fw.ABISource = ""
	}
}

func hasInit(names []string) bool {
	for _, n := range names {
		if n == "__init__.py" || n == "__init__.pyc" || strings.HasPrefix(n, "__init__.") && strings.HasSuffix(n, ".so") {
			return true
		}
	}
	return false
}

// extensionABI reads the ABI an extension module's file name is built for
// (the suffixes of CPython's Python/dynload_shlib.c):
// "_C.cpython-312-x86_64-linux-gnu.so" -> "cp312", "x.abi3.so" -> "abi3".
func extensionABI(name string) (string, bool) {
	base, ok := strings.CutSuffix(name, ".so")
	if !ok {
		return "", false
	}
	if strings.HasSuffix(base, ".abi3") {
		return "abi3", true
	}
	i := strings.LastIndex(base, ".cpython-")
	if i < 0 {
		return "", false
	}
	soabi, _, _ := strings.Cut(base[i+len(".cpython-"):], "-")
	digits := strings.TrimSuffix(strings.TrimSuffix(soabi, "d"), "t")
	if !digitsOnly(digits) || len(digits) < 2 || digits[0] != '3' {
		return "", false
	}
	return "cp" + strings.TrimSuffix(soabi, "d"), true
}

// parseWheelABI reads the ABI tags of a WHEEL file's "Tag:" lines
// ("cp312-cp312-manylinux_2_28_x86_64" -> "cp312", "py3-none-any" ->
// "none"), at most 64.
func parseWheelABI(src []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 0, 1024), maxWheelFile)
	for sc.Scan() && len(out) < 64 {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "tag") {
			continue
		}
		parts := strings.Split(strings.TrimSpace(v), "-")
		if len(parts) != 3 || parts[1] == "" {
			continue
		}
		for abi := range strings.SplitSeq(parts[1], ".") {
			if abi != "" && !slices.Contains(out, abi) {
				out = append(out, abi)
			}
		}
	}
	return out
}

// abiLoads reports whether an interpreter of e's Python loads one of abis:
// its own "cpXY" ("cpXYt" free-threaded), abi3 only without the GIL
// disabled (dynload_shlib.c leaves ".abi3.so" out under Py_GIL_DISABLED),
// and "none". Without a version or tags nothing can be told: it loads.
func abiLoads(abis []string, e pyenv.Environment) bool {
	if len(abis) == 0 || e.Version == "" {
		return true
	}
	own := "cp" + strings.ReplaceAll(e.Version, ".", "")
	if e.FreeThreaded {
		own += "t"
	}
	for _, a := range abis {
		if a == own || a == "none" || a == "abi3" && !e.FreeThreaded {
			return true
		}
	}
	return false
}

// abiMismatch says why e's Python cannot load fw's extension modules.
func abiMismatch(fw facts.Framework, e pyenv.Environment) string {
	return fmt.Sprintf("%s is built for %s, and %s is CPython %s", fw.ABISource, strings.Join(fw.ABI, ", "), interpreterOf(e), strings.TrimPrefix(e.LibName(), "python"))
}

func interpreterOf(e pyenv.Environment) string {
	if e.Interpreter != "" {
		return e.Interpreter
	}
	return "the Python of " + e.Prefix
}
