package envvars

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestReadRowsAreComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range Read {
		switch {
		case v.Name == "" || v.Use == "" || v.Source == "":
			t.Errorf("%+v: a row needs a name, a use and a source", v)
		case seen[v.Name]:
			t.Errorf("%s is listed twice", v.Name)
		case strings.Contains(strings.TrimSuffix(v.Name, "*"), "*"):
			t.Errorf("%s: a family has one '*', at the end", v.Name)
		case strings.HasSuffix(v.Name, "*") && !strings.HasSuffix(v.Name, "_*"):
			t.Errorf("%s: a family ends in _*, so that it holds no longer name by accident", v.Name)
		case v.Version != "" && !v.Scan:
			t.Errorf("%s states %s's version, which the scan reads: Scan must be set", v.Name, v.Version)
		}
		seen[v.Name] = true
	}
}

func TestIsReadFollowsTheTable(t *testing.T) {
	for name, want := range map[string]bool{
		"CUDA_VISIBLE_DEVICES":               true,
		"NVIDIA_REQUIRE_CUDA":                true,
		"NVIDIA_REQUIRE_ARCH":                true,
		"NVIDIA_REQUIRE_JETPACK_HOST_MOUNTS": true, // kept; preflight/require skips it
		"NVIDIA_REQUIRE":                     false,
		"PREFLIGHT_IMAGE_DIGEST":             true,
		"PREFLIGHT_IMAGE_SOURCE":             true,  // the image identity, read from the container's environment
		"PREFLIGHT_JOB_ID":                   true,  // the job id, a launcher variable
		"NCCL_DEBUG":                         false, // NCCL reads it; no rule does
		"TORCH_CUDA_ARCH_LIST":               false,
		"TENSORRT_VERSION":                   false,
		"NVARCH":                             false,
		"NV_CUDA_CUDART_VERSION":             false,
	} {
		if IsRead(name) != want {
			t.Errorf("IsRead(%q) = %v, want %v", name, !want, want)
		}
	}
}

func TestScannedAndVersionOfKeepTableOrder(t *testing.T) {
	if got, want := VersionOf(CuDNN), []string{"NV_CUDNN_VERSION", "CUDNN_VERSION"}; !slices.Equal(got, want) {
		t.Errorf("VersionOf(CuDNN) = %q, want %q", got, want)
	}
	if got := VersionOf(NCCL); !slices.Equal(got, []string{"NCCL_VERSION"}) {
		t.Errorf("VersionOf(NCCL) = %q", got)
	}
	want := []string{"LD_LIBRARY_PATH", "VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH", "PATH", "PYENV_ROOT", "PYENV_VERSION", "PYTHONUSERBASE", "PYTHONNOUSERSITE", "MAMBA_ROOT_PREFIX", "ENV_NAME", "MAMBA_DEFAULT_ENV", "CONDA_DEFAULT_ENV", "PWD", "NV_CUDNN_VERSION", "CUDNN_VERSION", "NCCL_VERSION"}
	if got := Scanned(); !slices.Equal(got, want) {
		t.Errorf("Scanned() = %q, want %q", got, want)
	}
}

// The README's table of the variables read is this table, row for row.
func TestREADMEListsExactlyTheVariablesRead(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n"+readmeSection+"\n")
	if !ok {
		t.Fatalf("README.md has no section %q", readmeSection)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var got []string
	for line := range strings.SplitSeq(section, "\n") {
		if strings.HasPrefix(line, "| `") {
			got = append(got, line)
		}
	}
	var want []string
	for _, v := range Read {
		want = append(want, readmeRow(v))
	}
	if !slices.Equal(got, want) {
		t.Errorf("README.md %s rows:\n%s\nwant (envvars.Read):\n%s", readmeSection, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

const readmeSection = "### Environment variables read from the image"

// readmeRow is v as a row of the README's table.
func readmeRow(v Variable) string {
	manifest := ""
	if v.Scan {
		manifest = "yes"
	}
	return fmt.Sprintf("| `%s` | %s | %s | %s |", v.Name, v.Use, manifest, v.Source)
}
