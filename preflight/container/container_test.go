package container

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// writeTree creates files under a new temporary root. A content starting
// with "->" makes a symbolic link; a name ending in "/" an empty directory.
func writeTree(t *testing.T, files map[string]string) fsroot.Root {
	t.Helper()
	dir := t.TempDir()
	for _, name := range slices.Sorted(maps.Keys(files)) {
		content := files[name]
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		switch target, link := strings.CutPrefix(content, "->"); {
		case link:
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
		case strings.HasSuffix(name, "/"):
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		default:
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return fsroot.Root(dir)
}

func TestParseVersionJSONTakesMajorMinorOfTheCUDAEntry(t *testing.T) {
	for _, tc := range []struct{ in, ver, full string }{
		{string(readTestdata(t, "version-11.8.json")), "11.8", "11.8.20220929"},
		{string(readTestdata(t, "version-12.6.json")), "12.6", "12.6.20241114"},
		{`{"cuda":{"name":"CUDA SDK","version":"12.2.2"}}`, "12.2", "12.2.2"},
		{`{"cuda":{"version":"13.0"}}`, "13.0", "13.0"},
	} {
		ver, full, err := ParseVersionJSON([]byte(tc.in))
		if err != nil || ver != tc.ver || full != tc.full {
			t.Errorf("ParseVersionJSON(%.40q) = %q, %q, %v; want %q, %q", tc.in, ver, full, err, tc.ver, tc.full)
		}
	}
}

func TestParseVersionJSONRejectsFilesWithoutACUDAVersion(t *testing.T) {
	for _, in := range []string{
		"", "{", "[]", `{}`, `{"cuda_cudart":{"version":"11.8.89"}}`, `{"cuda":null}`,
		`{"cuda":{"version":"12.2.99999999999999999999"}}`, // a component version.Compare cannot hold
		`{"cuda":{"version":""}}`, `{"cuda":{"version":"12"}}`, `{"cuda":{"version":"12.x"}}`, `{"cuda":{"version":12.2}}`,
	} {
		if ver, full, err := ParseVersionJSON([]byte(in)); err == nil {
			t.Errorf("ParseVersionJSON(%q) = %q, %q; want an error", in, ver, full)
		}
	}
}

func TestParseVersionTxtReadsTheCUDAVersionLine(t *testing.T) {
	for _, tc := range []struct{ file, ver, full string }{
		{"version-11.0.txt", "11.0", "11.0.207"},
		{"version-10.0-patched.txt", "10.0", "10.0.130"},
	} {
		ver, full, err := ParseVersionTxt(readTestdata(t, tc.file))
		if err != nil || ver != tc.ver || full != tc.full {
			t.Errorf("%s: got %q, %q, %v; want %q, %q", tc.file, ver, full, err, tc.ver, tc.full)
		}
	}
	for _, in := range []string{"", "CUDA Patch Version 10.0.130.1\n", "CUDA Version \n", "CUDA Version ten\n"} {
		if ver, _, err := ParseVersionTxt([]byte(in)); err == nil {
			t.Errorf("ParseVersionTxt(%q) = %q; want an error", in, ver)
		}
	}
}

func TestEnvKeepsWhatPreflightReadsWithEmptyValues(t *testing.T) {
	got := Env(envvars.Parse([]string{
		"NVIDIA_VISIBLE_DEVICES=all",
		"NVIDIA_REQUIRE_CUDA=cuda>=12.8 brand=unknown,driver>=470,driver<471",
		"NVIDIA_DISABLE_REQUIRE=",
		"CUDA_VISIBLE_DEVICES=",
		"CUDA_VERSION=12.8.1",
		"CUDA_VERSION=11.0", // a second definition: the first wins, as for getenv
		"NV_CUDNN_VERSION=9.8.0.87-1",
		"NCCL_VERSION=2.25.1-1",
		"CUDNN_VERSION=8.9.5.29",
		// Set by NVIDIA's images, read by no rule (envvars.Read says why).
		"CUDA_DRIVER_VERSION=535.104.05",
		"NV_CUDA_CUDART_VERSION=12.8.90-1",
		"TORCH_CUDA_ARCH_LIST=5.2 6.0 6.1 7.0 7.2 7.5 8.0 8.6 8.7 9.0+PTX",
		"NVARCH=x86_64",
		"CUBLAS_VERSION=12.2.5.6",
		"PYTORCH_BUILD_VERSION=2.1.0a0+32f93b1",
		"PREFLIGHT_IMAGE=registry.example/train:1",
		"LD_LIBRARY_PATH=/usr/local/cuda/compat/lib:/usr/local/nvidia/lib64",
		"HOSTNAME=trainer-0",
		"AWS_SECRET_ACCESS_KEY=hunter2",
		"NCCL_DEBUG=INFO",
		"no-equals-sign",
		"=empty-name",
	}))
	want := map[string]string{
		"NVIDIA_VISIBLE_DEVICES": "all",
		"NVIDIA_REQUIRE_CUDA":    "cuda>=12.8 brand=unknown,driver>=470,driver<471",
		"NVIDIA_DISABLE_REQUIRE": "",
		"CUDA_VISIBLE_DEVICES":   "",
		"CUDA_VERSION":           "12.8.1",
		"NV_CUDNN_VERSION":       "9.8.0.87-1",
		"NCCL_VERSION":           "2.25.1-1",
		"CUDNN_VERSION":          "8.9.5.29",
		"PREFLIGHT_IMAGE":        "registry.example/train:1",
		"LD_LIBRARY_PATH":        "/usr/local/cuda/compat/lib:/usr/local/nvidia/lib64",
	}
	if !maps.Equal(got, want) {
		t.Errorf("Env =\n%v\nwant\n%v", got, want)
	}
}

func TestEnvKeepsWhatTheImageScanReads(t *testing.T) {
	// The scan gets its environment from facts.Container.Env, so each of
	// its variables must survive the filter.
	for _, k := range envvars.Scanned() {
		if got := Env(envvars.Parse([]string{k + "=x"})); got[k] != "x" {
			t.Errorf("Env drops %s, which the image scan reads", k)
		}
	}
}

func TestCUDAToolkitSourcesInOrder(t *testing.T) {
	json118 := string(readTestdata(t, "version-11.8.json"))
	for _, tc := range []struct {
		name  string
		files map[string]string
		env   map[string]string
		want  facts.CUDAToolkit
		warn  string
	}{
		{
			name: "version.json first",
			files: map[string]string{
				"usr/local/cuda":                   "->/usr/local/cuda-11.8",
				"usr/local/cuda-11.8/version.json": json118,
				"usr/local/cuda-11.8/version.txt":  "CUDA Version 11.0.207\n",
			},
			env:  map[string]string{"CUDA_VERSION": "12.2.2"},
			want: facts.CUDAToolkit{Version: "11.8", Full: "11.8.20220929", Source: "/usr/local/cuda/version.json"},
		},
		{
			name:  "version.txt without version.json",
			files: map[string]string{"usr/local/cuda/version.txt": string(readTestdata(t, "version-11.0.txt"))},
			want:  facts.CUDAToolkit{Version: "11.0", Full: "11.0.207", Source: "/usr/local/cuda/version.txt"},
		},
		{
			name: "a malformed version.json warns and falls through",
			files: map[string]string{
				"usr/local/cuda/version.json": `{"cuda":`,
				"usr/local/cuda/version.txt":  "CUDA Version 11.0.207\n",
			},
			want: facts.CUDAToolkit{Version: "11.0", Full: "11.0.207", Source: "/usr/local/cuda/version.txt"},
			warn: "version.json",
		},
		{
			name: "the cuda-X.Y link chain",
			files: map[string]string{
				"usr/local/cuda":           "->/etc/alternatives/cuda",
				"etc/alternatives/cuda":    "->../../usr/local/cuda-12.4",
				"usr/local/cuda-12.4/bin/": "",
			},
			want: facts.CUDAToolkit{Version: "12.4", Source: "/usr/local/cuda -> /usr/local/cuda-12.4"},
		},
		{
			name: "a dangling link is no toolkit",
			files: map[string]string{
				"usr/local/cuda": "->/usr/local/cuda-12.4",
			},
			env:  map[string]string{"CUDA_VERSION": "12.4.1"},
			want: facts.CUDAToolkit{Version: "12.4", Full: "12.4.1", Source: "env CUDA_VERSION"},
		},
		{
			name: "libcudart names, highest X.Y.Z, SONAME ignored",
			files: map[string]string{
				"usr/local/cuda/lib64/libcudart.so.11.0":                      "->libcudart.so.11.8.89",
				"usr/local/cuda/lib64/libcudart.so.11.8.89":                   "x",
				"usr/local/cuda/targets/x86_64-linux/lib/libcudart.so.11.8.9": "x",
				"usr/local/cuda/targets/x86_64-linux/lib/libcudart.so.12":     "x",
			},
			want: facts.CUDAToolkit{Version: "11.8", Full: "11.8.89", Source: "/usr/local/cuda/lib64/libcudart.so.11.8.89"},
		},
		{
			name: "libcudart under targets only",
			files: map[string]string{
				"usr/local/cuda/targets/sbsa-linux/lib/libcudart.so.12.2.140": "x",
			},
			want: facts.CUDAToolkit{Version: "12.2", Full: "12.2.140", Source: "/usr/local/cuda/targets/sbsa-linux/lib/libcudart.so.12.2.140"},
		},
		{
			name: "CUDA_VERSION last, four components as in NGC",
			env:  map[string]string{"CUDA_VERSION": "12.2.2.009"},
			want: facts.CUDAToolkit{Version: "12.2", Full: "12.2.2.009", Source: "env CUDA_VERSION"},
		},
		{
			name: "a malformed CUDA_VERSION warns",
			env:  map[string]string{"CUDA_VERSION": "twelve"},
			warn: "CUDA_VERSION",
		},
		{
			name: "nothing at all",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, warns := gatherCUDA(writeTree(t, tc.files), tc.env)
			// The kind says which rule found it: CUDA_VERSION, or a file.
			wantKind := facts.CUDAFromToolkit
			if strings.HasPrefix(got.Source, "env ") {
				wantKind = facts.CUDAFromEnv
			}
			if got.Version != "" && got.Kind != wantKind {
				t.Errorf("kind %q for source %q, want %q", got.Kind, got.Source, wantKind)
			}
			got.Kind = ""
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			joined := strings.Join(warns, "\n")
			if (tc.warn == "") != (len(warns) == 0) || !strings.Contains(joined, tc.warn) {
				t.Errorf("warnings %q, want one mentioning %q", warns, tc.warn)
			}
		})
	}
}

func TestCompatLibsCarryTheirDriverVersion(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  []facts.CompatLib
		warn  string
	}{
		{
			name: "cuda-compat-12-2 layout; the .so.1 link and other libraries ignored",
			files: map[string]string{
				"usr/local/cuda":                                           "->/usr/local/cuda-12.2",
				"usr/local/cuda-12.2/compat/libcuda.so":                    "->libcuda.so.1",
				"usr/local/cuda-12.2/compat/libcuda.so.1":                  "->libcuda.so.535.129.03",
				"usr/local/cuda-12.2/compat/libcuda.so.535.129.03":         "elf",
				"usr/local/cuda-12.2/compat/libnvidia-nvvm.so.535.129.03":  "elf",
				"usr/local/cuda-12.2/compat/libcudadebugger.so.535.129.03": "elf",
			},
			want: []facts.CompatLib{{Path: "/usr/local/cuda/compat/libcuda.so.535.129.03", DriverVersion: "535.129.03"}},
		},
		{
			name: "two-component driver versions",
			files: map[string]string{
				"usr/local/cuda/compat/libcuda.so.570.26": "elf",
			},
			want: []facts.CompatLib{{Path: "/usr/local/cuda/compat/libcuda.so.570.26", DriverVersion: "570.26"}},
		},
		{
			name: "only the .so.1 link: its target names the version",
			files: map[string]string{
				"usr/local/cuda/compat/lib/libcuda.so.1":               "->../lib.real/libcuda.so.535.104.05",
				"usr/local/cuda/compat/lib.real/libcuda.so.535.104.05": "elf",
			},
			want: []facts.CompatLib{{Path: "/usr/local/cuda/compat/lib.real/libcuda.so.535.104.05", DriverVersion: "535.104.05"}},
		},
		{
			name: "compat/lib is a link to compat: listed once",
			files: map[string]string{
				"usr/local/cuda/compat/lib":                  "->.",
				"usr/local/cuda/compat/libcuda.so.550.54.15": "elf",
			},
			want: []facts.CompatLib{{Path: "/usr/local/cuda/compat/libcuda.so.550.54.15", DriverVersion: "550.54.15"}},
		},
		{
			name: "an unversioned libcuda.so.1 file warns",
			files: map[string]string{
				"usr/local/cuda/compat/libcuda.so.1": "elf",
			},
			warn: "driver version is unknown",
		},
		{
			name: "a dangling .so.1 link warns",
			files: map[string]string{
				"usr/local/cuda/compat/libcuda.so.1": "->libcuda.so.535.129.03",
			},
			warn: "names no existing",
		},
		{
			name:  "no compat directory",
			files: map[string]string{"usr/local/cuda/bin/": ""},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, warns := gatherCompat(writeTree(t, tc.files))
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			joined := strings.Join(warns, "\n")
			if (tc.warn == "") != (len(warns) == 0) || !strings.Contains(joined, tc.warn) {
				t.Errorf("warnings %q, want one mentioning %q", warns, tc.warn)
			}
		})
	}
}

func TestGatherFillsEnvCUDAAndCompatOnly(t *testing.T) {
	root := writeTree(t, map[string]string{
		"usr/local/cuda":                                   "->/usr/local/cuda-12.2",
		"usr/local/cuda-12.2/version.json":                 `{"cuda":{"name":"CUDA SDK","version":"12.2.2"}}`,
		"usr/local/cuda-12.2/compat/libcuda.so.535.129.03": "elf",
	})
	c, warns := Gather(root, envvars.Parse([]string{"CUDA_VERSION=12.2.2", "NVIDIA_REQUIRE_CUDA=cuda>=12.2", "LANG=C.UTF-8"}))
	if len(warns) != 0 {
		t.Errorf("warnings: %q", warns)
	}
	if !maps.Equal(c.Env, map[string]string{"CUDA_VERSION": "12.2.2", "NVIDIA_REQUIRE_CUDA": "cuda>=12.2"}) {
		t.Errorf("Env = %v", c.Env)
	}
	if !reflect.DeepEqual(c.CUDA, facts.CUDAToolkit{Version: "12.2", Full: "12.2.2", Source: "/usr/local/cuda/version.json", Kind: facts.CUDAFromToolkit}) {
		t.Errorf("CUDA = %+v", c.CUDA)
	}
	if len(c.Compat) != 1 || c.Compat[0].DriverVersion != "535.129.03" {
		t.Errorf("Compat = %+v", c.Compat)
	}
	if c.Requirements != nil || c.Frameworks != nil || c.Stack != (facts.Stack{}) || c.Identity != (facts.Identity{}) {
		t.Errorf("Gather filled what other packages own: %+v", c)
	}
}

func FuzzParseVersionJSON(f *testing.F) {
	f.Add(readTestdata(f, "version-11.8.json"))
	f.Add(readTestdata(f, "version-12.6.json"))
	f.Add([]byte(`{"cuda":{"name":"CUDA SDK","version":"12.2.2"}}`))
	f.Add([]byte(`{"cuda":{"version":"0012.0009.1"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ver, full, err := ParseVersionJSON(data)
		checkVersionResult(t, ver, full, err)
	})
}

func FuzzParseVersionTxt(f *testing.F) {
	f.Add(readTestdata(f, "version-11.0.txt"))
	f.Add(readTestdata(f, "version-10.0-patched.txt"))
	f.Add([]byte("CUDA Version 99999999999.1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ver, full, err := ParseVersionTxt(data)
		checkVersionResult(t, ver, full, err)
	})
}

// checkVersionResult holds both parsers to the same contract: on success
// ver is "X.Y" in canonical form and agrees with full.
func checkVersionResult(t *testing.T, ver, full string, err error) {
	t.Helper()
	if err != nil {
		if ver != "" || full != "" {
			t.Fatalf("error %v with results %q, %q", err, ver, full)
		}
		return
	}
	again, ok := majorMinor(ver)
	if !ok || again != ver || strings.Count(ver, ".") != 1 {
		t.Fatalf("ver %q is not canonical X.Y", ver)
	}
	if m, ok := majorMinor(full); !ok || m != ver {
		t.Fatalf("full %q does not start with ver %q", full, ver)
	}
}

// A FIFO where version.json belongs is refused at once, with a warning
// naming it, and the toolkit version comes from the next source.
func TestGatherDoesNotBlockOnAFIFOWhereVersionJSONBelongs(t *testing.T) {
	root := writeTree(t, map[string]string{"usr/local/cuda/version.txt": "CUDA Version 11.0.207\n"})
	fifo := filepath.Join(string(root), "usr/local/cuda/version.json")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var c facts.Container
	var warns []string
	go func() {
		defer close(done)
		c, warns = Gather(root, envvars.Parse([]string{"CUDA_VERSION=12.2.2"}))
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("Gather blocked on a FIFO")
	}
	if !strings.Contains(strings.Join(warns, "\n"), fifo+": not a regular file (a FIFO)") {
		t.Errorf("warnings %q do not name the FIFO", warns)
	}
	if c.CUDA.Version != "11.0" || c.CUDA.Source != "/usr/local/cuda/version.txt" {
		t.Errorf("CUDA = %+v, want 11.0 from version.txt", c.CUDA)
	}
}
