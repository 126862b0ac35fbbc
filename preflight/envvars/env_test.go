package envvars

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// readEnv reads a testdata environment, one NAME=value a line.
func readEnv(t testing.TB, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func TestParseTakesTheFirstDefinitionAsGetenvDoes(t *testing.T) {
	list := []string{
		"CUDA_VERSION=12.8.1",
		"CUDA_VERSION=11.0",
		"CUDA_VISIBLE_DEVICES=",
		"NVIDIA_REQUIRE_CUDA=cuda>=12.8 brand=tesla,driver>=470,driver<471",
		"EQUALS=a=b",
		"no-equals-sign",
		"=empty-name",
	}
	e := Parse(list)
	want := map[string]string{
		"CUDA_VERSION":         "12.8.1",
		"CUDA_VISIBLE_DEVICES": "",
		"NVIDIA_REQUIRE_CUDA":  "cuda>=12.8 brand=tesla,driver>=470,driver<471",
		"EQUALS":               "a=b",
	}
	if got := maps.Collect(e.All()); !maps.Equal(got, want) {
		t.Errorf("Parse = %v, want %v", got, want)
	}
	if v, ok := e.Lookup("CUDA_VISIBLE_DEVICES"); !ok || v != "" {
		t.Errorf(`Lookup(CUDA_VISIBLE_DEVICES) = %q, %v; want "", true (set to empty is not unset)`, v, ok)
	}
	if _, ok := e.Lookup("HOME"); ok {
		t.Error("Lookup(HOME) found an unset variable")
	}
	if !slices.Equal(e.List(), list) {
		t.Error("List is not the environment as given")
	}
	if e.Len() != len(want) {
		t.Errorf("Len = %d, want %d", e.Len(), len(want))
	}
	var zero Env
	if zero.List() != nil || zero.Len() != 0 {
		t.Error("the zero Env is not empty")
	}
}

// What a container's facts keep of NVIDIA's own images: exactly the
// variables Read lists, and none of the ones they set for no rule here.
func TestReadKeepsOfNVIDIAImagesOnlyWhatARuleReads(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"nvidia-cuda-11.8.0-base.env", []string{"CUDA_VERSION", "LD_LIBRARY_PATH", "NVIDIA_REQUIRE_CUDA", "NVIDIA_VISIBLE_DEVICES", "PATH"}},
		{"nvidia-cuda-12.8.1-cudnn-runtime.env", []string{"CUDA_VERSION", "LD_LIBRARY_PATH", "NCCL_VERSION", "NVIDIA_REQUIRE_CUDA", "NVIDIA_VISIBLE_DEVICES", "NV_CUDNN_VERSION", "PATH"}},
		{"ngc-pytorch-23.10.env", []string{"CUDA_VERSION", "CUDNN_VERSION", "LD_LIBRARY_PATH", "NCCL_VERSION", "NVIDIA_REQUIRE_CUDA", "NVIDIA_VISIBLE_DEVICES"}},
	} {
		got := slices.Sorted(maps.Keys(Parse(readEnv(t, tc.file)).Filter(IsRead)))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: kept %q, want %q", tc.file, got, tc.want)
		}
	}
}

func TestNamesMatchExactNamesAndPrefixes(t *testing.T) {
	n := Names{Exact: map[string]bool{"PATH": true}, Prefixes: []string{"NCCL_"}}
	for name, want := range map[string]bool{
		"PATH": true, "NCCL_DEBUG": true, "NCCL_": true,
		"PATHS": false, "XPATH": false, "NCCL": false, "": false,
	} {
		if n.Has(name) != want {
			t.Errorf("Has(%q) = %v, want %v", name, !want, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"nvidia-cuda-11.8.0-base.env", "nvidia-cuda-12.8.1-cudnn-runtime.env", "ngc-pytorch-23.10.env"} {
		// As /proc/PID/environ holds it: NUL after every entry.
		f.Add(strings.Join(readEnv(f, name), "\x00") + "\x00")
	}
	f.Add("A=1\x00A=2\x00=x\x00B\x00C=\x00")
	f.Fuzz(func(t *testing.T, environ string) {
		list := strings.Split(environ, "\x00")
		e := Parse(list)
		first := map[string]string{}
		for _, kv := range list {
			name, value, ok := strings.Cut(kv, "=")
			if _, dup := first[name]; ok && name != "" && !dup {
				first[name] = value
			}
		}
		if got := maps.Collect(e.All()); !maps.Equal(got, first) {
			t.Fatalf("Parse(%q) = %v, want the first definitions %v", list, got, first)
		}
		if e.Len() != len(first) || !slices.Equal(e.List(), list) {
			t.Fatalf("Len %d (want %d), or List changed", e.Len(), len(first))
		}
	})
}
