package fatbin_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/fatbin"
)

// The fixtures in testdata/nvcc were built by NVIDIA's nvcc 11.8 and 12.4
// (scripts/nvcc-fixtures.sh); truth.txt holds what NVIDIA's cuobjdump
// --list-elf --list-ptx printed for each.
const nvccDir = "testdata/nvcc"

// cuobjdumpListing is one fixture's listing: the cubin and PTX targets in
// cuobjdump's order ("sm_80", "sm_90a": cuobjdump names PTX by sm_ too).
type cuobjdumpListing struct {
	elf, ptx []string
}

var listingLine = regexp.MustCompile(`^(ELF|PTX) file +\d+: .*\.(sm_\d+[af]?)\.(cubin|ptx)$`)

func readTruth(t *testing.T) map[string]cuobjdumpListing {
	t.Helper()
	f, err := os.Open(filepath.Join(nvccDir, "truth.txt"))
	if err != nil {
		t.Fatalf("the committed fixture listing is missing (scripts/nvcc-fixtures.sh writes it): %v", err)
	}
	defer f.Close()
	out := map[string]cuobjdumpListing{}
	name := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, "== "); ok {
			name = n
			out[name] = cuobjdumpListing{}
			continue
		}
		m := listingLine.FindStringSubmatch(line)
		if m == nil || name == "" {
			continue
		}
		l := out[name]
		if m[1] == "ELF" {
			l.elf = append(l.elf, m[2])
		} else {
			l.ptx = append(l.ptx, m[2])
		}
		out[name] = l
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// listing is what the scanner found, spelled as cuobjdump spells it.
func listing(r fatbin.Result) cuobjdumpListing {
	var l cuobjdumpListing
	for _, e := range r.Entries {
		a := e.Arch
		a.PTX = false // cuobjdump names a compute_90a PTX sm_90a.ptx
		switch {
		case e.Kind.IsCubin():
			l.elf = append(l.elf, a.String())
		case e.Kind.IsPTX():
			l.ptx = append(l.ptx, a.String())
		}
	}
	return l
}

// Every shared-library fixture's entries are exactly what cuobjdump lists,
// in its order, 'a' suffixes included: the relocatable __nv_relfatbin of
// the PTX-only builds is not listed by cuobjdump and not scanned, and the
// device-link stubs are listed by both.
func TestEntriesMatchCuobjdump(t *testing.T) {
	truth := readTruth(t)
	libs, _ := filepath.Glob(filepath.Join(nvccDir, "*.so"))
	if len(libs) < 11 {
		t.Fatalf("found %d fixtures in %s, want the 11 that scripts/nvcc-fixtures.sh builds", len(libs), nvccDir)
	}
	for _, lib := range libs {
		name := filepath.Base(lib)
		t.Run(name, func(t *testing.T) {
			want, ok := truth[name]
			if !ok {
				t.Fatalf("truth.txt has no listing for %s", name)
			}
			r, err := fatbin.ScanFile(lib)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Warnings) > 0 {
				t.Errorf("warnings on a real library: %q", r.Warnings)
			}
			got := listing(r)
			if !slices.Equal(got.elf, want.elf) || !slices.Equal(got.ptx, want.ptx) {
				t.Errorf("scanner lists cubins %v, PTX %v; cuobjdump lists cubins %v, PTX %v", got.elf, got.ptx, want.elf, want.ptx)
			}
		})
	}
}

// What each fixture carries for the runtime to load, per fatbin: the
// device-link stubs and the kernel-less unit's code are not images, and
// the images of one fatbin are listed together (cubins, then PTX, with its
// ISA version).
func TestFixtureFatbins(t *testing.T) {
	tests := map[string][]string{
		"sm70.so":          {"sm_70"},
		"ptx80.so":         {"compute_80@7.8"},
		"mix.so":           {"sm_70 sm_80 compute_80@7.8"},
		"compressed.so":    {"sm_75 sm_86 compute_86@7.8"},
		"rdc.so":           {"sm_80"}, // the linked kernel, in the device-link fatbin
		"static.so":        {"sm_75 sm_80"},
		"split.so":         {"sm_75", "sm_86"},
		"sm90-90a.so":      {"sm_90 sm_90a compute_90@8.4 compute_90a@8.4"},
		"ptx90a.so":        {"compute_90a@8.4"},
		"compressed90a.so": {"sm_90a compute_90a@8.4"},
		"cuda124-sm80.so":  {"sm_80 compute_80@8.4"},
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			r, err := fatbin.ScanFile(filepath.Join(nvccDir, name))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, g := range r.Fatbins {
				if g.Count != 1 {
					t.Errorf("group %v counts %d fatbins, want 1", g.Images, g.Count)
				}
				var ims []string
				for _, im := range g.Images {
					s := im.Arch
					if im.PTXVersion != "" {
						s += "@" + im.PTXVersion
					}
					ims = append(ims, s)
				}
				got = append(got, strings.Join(ims, " "))
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("fatbins carry %q, want %q", got, want)
			}
		})
	}
}
