//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gpu-preflight/gpu-preflight/test/fakenvml"
)

// Issue 39's probes: a GPU name from the driver and torch's version from
// its version.py, each with an OSC that retitles the terminal and a CSI that
// clears it, the name also with a right-to-left override; and format
// characters (zero-width space, LRI, ALM, BOM, soft hyphen) in a requirement.
const (
	gpuNameProbe      = "NVIDIA H100\x1b]0;PWNED\x07\x1b[2J\u202e"
	torchVersionProbe = "2.9.0+cu130\x1b]0;PWNED\x07\x1b[2J"
	formatProbe       = "\u200b\u2066\u061c\ufeff\u00ad"
)

// hostileNode is 8 H100s on 580.65.06 whose NVML names are gpuNameProbe.
func hostileNode() fakenvml.Scenario {
	s := fakenvml.H100x8("580.65.06", 13000)
	for _, g := range s.GPUs {
		g["name"] = gpuNameProbe
	}
	return s
}

// torchProbe writes torch 2.9.0+cu130 into root, version.py as torch's
// tools/generate_torch_version.py writes it but for the probe in
// __version__.
func torchProbe(t *testing.T, root string) {
	t.Helper()
	sp := filepath.Join(root, e2eSP)
	for p, s := range map[string]string{
		"torch/version.py": "from typing import Optional\n__version__ = '" + torchVersionProbe + "'\ndebug = False\n" +
			"cuda: Optional[str] = '13.0'\nhip: Optional[str] = None\n",
		"torch-2.9.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: torch\nVersion: 2.9.0\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(sp, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sp, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// wantTerminalSafe fails unless out holds nothing a terminal acts on or
// does not show: no control character but the line feed (Unicode Cc: C0,
// DEL, C1), no format character (Cf), no line or paragraph separator, no
// byte that is not UTF-8; and unless it shows each of the escapes in want.
func wantTerminalSafe(t *testing.T, what, out string, want ...string) {
	t.Helper()
	for i, r := range out {
		if r == utf8.RuneError && !strings.HasPrefix(out[i:], "\ufffd") ||
			r != '\n' && unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) {
			line := strings.Count(out[:i], "\n") + 1
			t.Errorf("%s: line %d holds %q raw:\n%q", what, line, out[i:i+max(1, utf8.RuneLen(r))], strings.Split(out, "\n")[line-1])
			return
		}
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s does not show %s:\n%s", what, w, out)
		}
	}
}

func TestExplainShowsTheProbesEscaped(t *testing.T) {
	env := shimEnv(t, fakeLibrary(t), ptr(hostileNode()),
		"NVIDIA_REQUIRE_CUDA=cuda>=99.0 brand=nvidia"+formatProbe+",driver>=580 brand=tesla\x1b]0;PWNED\x07,driver>=580\u202e")
	r := run(t, 30*time.Second, env, shimBin(t), "explain")
	if r.code != 1 || !strings.Contains(r.stdout, "8 visible GPU(s)") {
		t.Fatalf("explain exit %d, want 1 (no term holds) on 8 GPUs:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	wantTerminalSafe(t, "explain", r.stdout+r.stderr, `brand=nvidia\u200b\u2066\u061c\ufeff\u00ad`, `brand=tesla\x1b]0;PWNED\x07`,
		`GPU 0 (NVIDIA H100\x1b]0;PWNED\x07\x1b[2J\u202e, brand Nvidia`)

	arg := run(t, 30*time.Second, env, shimBin(t), "explain", "cuda>=12"+formatProbe+"\x1b]0;PWNED\x07\x1b[2J\u202e")
	if arg.code != 64 {
		t.Errorf("explain of an invalid argument exit %d, want 64:\n%s", arg.code, arg.stdout)
	}
	wantTerminalSafe(t, "explain with an argument", arg.stdout+arg.stderr, `\x1b]0;PWNED\x07\x1b[2J\u202e`)
}

func TestAffinityShowsTheProbesEscaped(t *testing.T) {
	env := shimEnv(t, fakeLibrary(t), ptr(hostileNode()))
	root := envValue(env, "PREFLIGHT_ROOT")
	torchProbe(t, root)
	r := run(t, 30*time.Second, env, shimBin(t), "affinity", "--root", root)
	if r.code != 0 || !strings.Contains(r.stdout, "1 framework(s)") || !strings.Contains(r.stdout, "nodeAffinity:") {
		t.Fatalf("affinity exit %d, want the torch image's affinity:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	wantTerminalSafe(t, "affinity", r.stdout+r.stderr)
}

// Two records of one node, the second after its GPUs and torch took the
// probes: diff's text names both changes, escaped.
func TestDiffTextShowsTheProbesEscaped(t *testing.T) {
	prov := t.TempDir()
	check := func(s fakenvml.Scenario, probe bool) {
		env := shimEnv(t, fakeLibrary(t), &s, "PREFLIGHT_PROVENANCE_DIR="+prov, "PREFLIGHT_POLICY=warn")
		if probe {
			torchProbe(t, envValue(env, "PREFLIGHT_ROOT"))
		}
		if r := run(t, 30*time.Second, env, shimBin(t), "check", "--json"); r.code != 0 {
			t.Fatalf("check exit %d:\n%s", r.code, r.stderr)
		}
	}
	check(fakenvml.H100x8("580.65.06", 13000), false)
	check(hostileNode(), true)
	d := run(t, 30*time.Second, []string{"PATH=/usr/bin:/bin"}, shimBin(t), "diff", prov)
	if d.code != 1 || !strings.Contains(d.stdout, "old: ") {
		t.Fatalf("diff exit %d, want 1 (changes that matter):\n%s\n%s", d.code, d.stdout, d.stderr)
	}
	wantTerminalSafe(t, "diff", d.stdout+d.stderr, `NVIDIA H100\x1b]0;PWNED\x07\x1b[2J\u202e`, `2.9.0+cu130\x1b]0;PWNED\x07\x1b[2J`)
}
