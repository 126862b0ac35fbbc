package image

import (
	"slices"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/pyenv"
)

// WHEEL files as the build backends write them: Debian trixie's PyYAML
// 6.0.2 (setuptools), idna 3.10 (flit), torch's manylinux and cp313t
// wheels, a compressed tag set.
const (
	wheelPyYAML  = "Wheel-Version: 1.0\nGenerator: setuptools (75.8.0)\nRoot-Is-Purelib: false\nTag: cp313-cp313-linux_x86_64\n\n"
	wheelIdna    = "Wheel-Version: 1.0\nGenerator: flit 3.12.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
	wheelTorchFT = "Wheel-Version: 1.0\nGenerator: bdist_wheel (0.45.1)\nRoot-Is-Purelib: false\nTag: cp313-cp313t-manylinux_2_28_x86_64\n"
	wheelAbi3    = "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp39-abi3-manylinux_2_17_x86_64\nTag: cp39-abi3-manylinux2014_x86_64\n"
)

func TestWheelTagsNameTheABI(t *testing.T) {
	for src, want := range map[string][]string{
		wheelPyYAML:                             {"cp313"},
		wheelIdna:                               {"none"},
		wheelTorchFT:                            {"cp313t"},
		wheelAbi3:                               {"abi3"},
		"Tag: cp310-cp310.cp311-linux_x86_64\n": {"cp310", "cp311"},
		"Tag: nonsense\n":                       nil,
	} {
		if got := parseWheelABI([]byte(src)); !slices.Equal(got, want) {
			t.Errorf("%q: %q, want %q", src, got, want)
		}
	}
}

// Extension module names as CPython's dynload_shlib.c suffixes them, from
// Debian trixie's dist-packages (torch, PyYAML, psutil) and torch's cp313t.
func TestExtensionModuleNamesNameTheABI(t *testing.T) {
	for name, want := range map[string]string{
		"_C.cpython-313-x86_64-linux-gnu.so":    "cp313",
		"_C.cpython-313t-x86_64-linux-gnu.so":   "cp313t",
		"_yaml.cpython-313-x86_64-linux-gnu.so": "cp313",
		"_psutil_linux.abi3.so":                 "abi3",
		"_C.cpython-311d-x86_64-linux-gnu.so":   "cp311",
		"libtorch_cuda.so":                      "",
		"_C.cpython-x-x86_64-linux-gnu.so":      "",
	} {
		if got, _ := extensionABI(name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

// A free-threaded interpreter loads only its own "t" ABI, never abi3
// (dynload_shlib.c leaves ".abi3.so" out under Py_GIL_DISABLED); the
// default build loads its own, abi3 and pure Python.
func TestWhichPythonLoadsWhichABI(t *testing.T) {
	ft := pyenv.Environment{Version: "3.13", FreeThreaded: true}
	std := pyenv.Environment{Version: "3.13"}
	for _, tc := range []struct {
		abis    []string
		ft, std bool
	}{
		{[]string{"cp313t"}, true, false},
		{[]string{"cp313"}, false, true},
		{[]string{"abi3"}, false, true},
		{[]string{"none"}, true, true},
		{[]string{"cp312"}, false, false},
		{nil, true, true},
	} {
		if abiLoads(tc.abis, ft) != tc.ft || abiLoads(tc.abis, std) != tc.std {
			t.Errorf("%q: free-threaded %v, default %v; want %v, %v", tc.abis, abiLoads(tc.abis, ft), abiLoads(tc.abis, std), tc.ft, tc.std)
		}
	}
}

func FuzzParseWheelABI(f *testing.F) {
	for _, s := range []string{wheelPyYAML, wheelIdna, wheelTorchFT, wheelAbi3} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		tags := parseWheelABI(src)
		if len(tags) > 64 {
			t.Fatalf("%d tags", len(tags))
		}
		for _, tag := range tags {
			if tag == "" || strings.ContainsAny(tag, "-\n") {
				t.Errorf("tag %q", tag)
			}
		}
	})
}

func FuzzExtensionABI(f *testing.F) {
	for _, s := range []string{"_C.cpython-313-x86_64-linux-gnu.so", "_C.cpython-313t-x86_64-linux-gnu.so", "_psutil_linux.abi3.so", "libc10.so"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if tag, ok := extensionABI(name); ok != (tag != "") || ok && tag != "abi3" && !strings.HasPrefix(tag, "cp3") {
			t.Errorf("%q: %q %v", name, tag, ok)
		}
	})
}
