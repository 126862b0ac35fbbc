package pyenv

import (
	"strings"
	"testing"
	"time"
)

// torch/version.py as tools/generate_torch_version.py writes it.
const seedTorchVersion = "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n__version__ = '2.1.0+cu118'\ndebug = False\ncuda: Optional[str] = '11.8'\ngit_version = '7bcf7da3a268b435777fe87c7794c382f444e86d'\nhip: Optional[str] = None\n"

// TensorFlow's build_info.py as gen_build_info.py writes it.
const seedBuildInfo = "import collections\n\nbuild_info = collections.OrderedDict([('cpu_compiler', '/usr/bin/gcc'), ('cuda_compute_capabilities', ['sm_80', 'compute_90']), ('cuda_version', '12.1'), ('is_cuda_build', True)])\n"

// Only module-level assignments of literals are read: annotated ones too,
// over continued lines; a statement inside a block is not module level.
func TestModuleAssignmentsReadsTopLevelLiterals(t *testing.T) {
	src := seedTorchVersion + "def f():\n    debug = True\n" +
		"archs = [80,\n  86]  # compiled\nlong = 'a' \\\n  'b'\npair = ('x',)\nneg = -1\nbytes_ = b'\\x41\\u00e9'\n"
	f := ModuleAssignments([]byte(src))
	for name, want := range map[string]string{"__version__": "2.1.0+cu118", "cuda": "11.8", "long": "ab", "bytes_": "Aé"} {
		if got, ok := f[name].Str(); !ok || got != want {
			t.Errorf("%s = %q %v, want %q", name, got, ok, want)
		}
	}
	if _, ok := f["hip"].Str(); ok {
		t.Error("hip = None read as a string")
	}
	if f["debug"].True() {
		t.Error("an assignment inside a function was taken for the module's")
	}
	if items := f["archs"].Items(); len(items) != 2 {
		t.Errorf("archs = %+v, want two items", items)
	}
	if items := f["pair"].Items(); len(items) != 1 {
		t.Errorf("('x',) = %+v, want a one-item tuple", items)
	}
	if n, ok := f["neg"].Scalar(); !ok || n != "-1" {
		t.Errorf("neg = %q %v", n, ok)
	}
}

// A mapping's pairs are read through the call that wraps it.
func TestPairsReadThroughOrderedDict(t *testing.T) {
	p := ModuleAssignments([]byte(seedBuildInfo))["build_info"].Pairs()
	if v, _ := p["cuda_version"].Str(); v != "12.1" || !p["is_cuda_build"].True() || len(p["cuda_compute_capabilities"].Items()) != 2 {
		t.Errorf("pairs = %+v", p)
	}
}

// A module of a million values costs the reader its value budget, not
// memory in proportion to the file: the assignment past the budget fails.
func TestModuleAssignmentsStopsAtItsValueBudget(t *testing.T) {
	src := "x = [" + strings.Repeat("1,", 1<<20) + "]\ny = '1'\n"
	start := time.Now()
	f := ModuleAssignments([]byte(src))
	if _, ok := f["x"]; ok {
		t.Error("a list past the value budget was read")
	}
	t.Logf("%d bytes in %v", len(src), time.Since(start))
}

func FuzzModuleAssignments(f *testing.F) {
	for _, s := range []string{seedTorchVersion, seedBuildInfo, seedFinder, "x = '''a\nb'''\n", "a = {'k': [1, (2,), None]}\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		for name, v := range ModuleAssignments(src) {
			if name == "" {
				t.Fatalf("an assignment without a name: %+v", v)
			}
			v.Pairs()
		}
	})
}
