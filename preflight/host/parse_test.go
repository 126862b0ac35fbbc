package host

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/version"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestParseDriverVersionReadsEveryNVRMForm(t *testing.T) {
	for _, tc := range []struct {
		file, version string
		open          bool
	}{
		{"version-535-proprietary.txt", "535.129.03", false},
		{"version-550-open.txt", "550.54.15", true},
		{"version-535-aarch64.txt", "535.104.05", false},
		{"version-470-proprietary.txt", "470.57.02", false},
	} {
		v, open, err := ParseDriverVersion(readTestdata(t, tc.file))
		if err != nil || v != tc.version || open != tc.open {
			t.Errorf("%s: got (%q, %v, %v), want (%q, %v, nil)", tc.file, v, open, err, tc.version, tc.open)
		}
	}
}

func TestParseDriverVersionTakesTwoComponentVersions(t *testing.T) {
	// The 550.54.15 line with R570's first release, 570.26: two components
	// (CUDA 12.8 GA's minimum driver, docs/sources.md, "Driver and toolkit tables").
	v, _, err := ParseDriverVersion([]byte("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.26  Release Build  (dvs-builder@U16-I3-B03-4-3)  Tue Mar  5 22:15:33 UTC 2024\n"))
	if err != nil || v != "570.26" {
		t.Errorf("got %q, %v; want 570.26", v, err)
	}
}

func TestParseDriverVersionRejectsFilesWithoutAVersion(t *testing.T) {
	for name, in := range map[string]string{
		"empty":                          "",
		"no NVRM line":                   "GCC version:  gcc version 11.4.0\n",
		"NVRM without a version":         "NVRM version: NVIDIA UNIX x86_64 Kernel Module  Thu Oct 19 18:56:32 UTC 2023\n",
		"version without a dot":          "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535  Thu Oct 19\n",
		"trailing dot":                   "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.  Thu Oct 19\n",
		"component too large to compare": "NVRM version:20000000000000000000.0\n",
		"last component too large":       "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.20000000000000000000\n",
	} {
		if v, _, err := ParseDriverVersion([]byte(in)); err == nil {
			t.Errorf("%s: got version %q, want an error", name, v)
		}
	}
}

func TestParseGPUInformationMapsTheDriversFields(t *testing.T) {
	g, err := ParseGPUInformation(readTestdata(t, "information-v100.txt"))
	want := facts.GPU{
		Name:     "Tesla V100-SXM2-16GB",
		UUID:     "GPU-2d5e0c33-1b3d-6d0a-5d5f-9b5b8b7b1c2e",
		PCIBusID: "00000000:3B:00.0",
	}
	if err != nil || !sameGPU(g, want) {
		t.Errorf("got %+v, %v; want %+v", g, err, want)
	}
}

func TestParseGPUInformationLeavesUnreadValuesEmpty(t *testing.T) {
	g, err := ParseGPUInformation(readTestdata(t, "information-h100-uninitialised.txt"))
	want := facts.GPU{Name: "NVIDIA H100 80GB HBM3", PCIBusID: "00000000:1B:00.0"}
	if err != nil || !sameGPU(g, want) {
		t.Errorf("got %+v, %v; want %+v", g, err, want)
	}
	g, err = ParseGPUInformation([]byte("Model: \t\t ??\nBus Location: \t ????:??:??.?\n"))
	if err != nil || g.Name != "" || g.PCIBusID != "" {
		t.Errorf("question marks: got %+v, %v; want empty fields", g, err)
	}
}

func TestParseGPUInformationKeepsWhatParsedAndReportsTheRest(t *testing.T) {
	g, err := ParseGPUInformation([]byte("Model: \t\t NVIDIA L4\nBus Location: \t 0000:zz:00.0\n"))
	if err == nil {
		t.Fatal("want an error for the malformed bus id")
	}
	for _, s := range []string{"0000:zz:00.0"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not name %q", err, s)
		}
	}
	if g.Name != "NVIDIA L4" || g.PCIBusID != "" {
		t.Errorf("got %+v; want the model kept and the bad fields empty", g)
	}
}

func TestParseGPUInformationRejectsOtherFiles(t *testing.T) {
	for _, in := range []string{"", "Runtime D3 status:          Disabled by default\n", "garbage"} {
		if _, err := ParseGPUInformation([]byte(in)); err == nil {
			t.Errorf("%q: want an error", in)
		}
	}
}

func TestExcludedReadsTheGPUExcludedLine(t *testing.T) {
	for in, want := range map[string]bool{
		string(readTestdata(t, "information-v100.txt")): false,
		"Model: \t\t Tesla T4\nGPU Excluded:\t Yes\n":   true,
		"GPU Excluded:\t yes\n":                         false, // the driver prints "Yes"/"No" only
		"":                                              false,
	} {
		if got := Excluded([]byte(in)); got != want {
			t.Errorf("Excluded(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestNormalizeBusIDUsesNVMLsForm(t *testing.T) {
	for in, want := range map[string]string{
		"0000:3b:00.0":     "00000000:3B:00.0",
		"00000000:3B:00.0": "00000000:3B:00.0",
		"0001:c1:1f.7":     "00000001:C1:1F.7",
		"3b:00.0":          "00000000:3B:00.0",
		" 0000:3b:00.0\t":  "00000000:3B:00.0",
		"10000:01:00.0":    "00010000:01:00.0",
	} {
		if got, err := NormalizeBusID(in); err != nil || got != want {
			t.Errorf("NormalizeBusID(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0000:3b:00", "0000:3b:20.0", "0000:3b:00.8", "000000000:3b:00.0",
		"0000:3b:00.0.0", "0000:+3:00.0", "0000:3b:0x1.0", "a:b:c:d.0", "0000:3b:.0", "0000::00.0"} {
		if got, err := NormalizeBusID(in); err == nil {
			t.Errorf("NormalizeBusID(%q) = %q, want an error", in, got)
		}
	}
}

func TestCgroupV2Parsers(t *testing.T) {
	mem := map[string]uint64{"max\n": 0, "8589934592\n": 8 << 30, "0": 0}
	for in, want := range mem {
		if got, err := ParseMemoryMax(in); err != nil || got != want {
			t.Errorf("ParseMemoryMax(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	cpu := map[string]float64{"max 100000\n": 0, "200000 100000\n": 2, "50000 100000": 0.5, "150000": 1.5, "max": 0}
	for in, want := range cpu {
		if got, err := ParseCPUMax(in); err != nil || got != want {
			t.Errorf("ParseCPUMax(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "1G", "max max"} {
		if _, err := ParseMemoryMax(in); err == nil {
			t.Errorf("ParseMemoryMax(%q): want an error", in)
		}
	}
	for _, in := range []string{"", "200000 0", "x 100000", "1 2 3", "-5 100000", "100 max"} {
		if _, err := ParseCPUMax(in); err == nil {
			t.Errorf("ParseCPUMax(%q): want an error", in)
		}
	}
}

func TestCgroupV1Parsers(t *testing.T) {
	mem := map[string]uint64{
		"9223372036854771712\n": 0, // "no limit" on 4 KiB pages
		"9223372036854710272\n": 0, // "no limit" on 64 KiB pages
		"4611686018427387904":   0, // 2^62
		"4611686018427387903":   4611686018427387903,
		"-1":                    0,
		"17179869184\n":         16 << 30,
	}
	for in, want := range mem {
		if got, err := ParseMemoryLimitInBytes(in); err != nil || got != want {
			t.Errorf("ParseMemoryLimitInBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, tc := range []struct {
		quota, period string
		want          float64
	}{
		{"-1\n", "100000\n", 0},
		{"-1", "garbage", 0}, // the period does not matter without a quota
		{"400000\n", "100000\n", 4},
		{"25000", "50000", 0.5},
	} {
		if got, err := ParseCFSQuota(tc.quota, tc.period); err != nil || got != tc.want {
			t.Errorf("ParseCFSQuota(%q, %q) = %v, %v; want %v", tc.quota, tc.period, got, err, tc.want)
		}
	}
	for _, tc := range [][2]string{{"", "100000"}, {"100000", "0"}, {"100000", ""}, {"max", "100000"}} {
		if _, err := ParseCFSQuota(tc[0], tc[1]); err == nil {
			t.Errorf("ParseCFSQuota(%q, %q): want an error", tc[0], tc[1])
		}
	}
	if _, err := ParseMemoryLimitInBytes("lots"); err == nil {
		t.Error(`ParseMemoryLimitInBytes("lots"): want an error`)
	}
}

func TestParseProcCgroupSplitsUnifiedAndV1(t *testing.T) {
	unified, v1 := parseProcCgroup([]byte("12:cpu,cpuacct:/docker/abc\n11:memory:/docker/abc\n1:name=systemd:/docker/abc\n0::/system.slice/docker-abc.scope\nbroken line\n"))
	if unified != "/system.slice/docker-abc.scope" || v1["cpu"] != "/docker/abc" || v1["cpuacct"] != "/docker/abc" || v1["memory"] != "/docker/abc" {
		t.Errorf("got %q, %v", unified, v1)
	}
}

var busIDForm = regexp.MustCompile(`^[0-9A-F]{8}:[0-9A-F]{2}:[01][0-9A-F]\.[0-7]$`)

func FuzzParseDriverVersion(f *testing.F) {
	for _, name := range []string{"version-535-proprietary.txt", "version-550-open.txt", "version-535-aarch64.txt", "version-470-proprietary.txt"} {
		f.Add(readTestdata(f, name))
	}
	f.Add([]byte("NVRM version: Kernel Module 1..2 3.4.\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, open, err := ParseDriverVersion(data)
		if err != nil {
			if v != "" || open {
				t.Fatalf("error %v with results %q, %v", err, v, open)
			}
			return
		}
		if !version.Valid(v) || !strings.Contains(string(data), v) {
			t.Fatalf("version %q is not a dotted number from the input", v)
		}
		if _, err := version.Compare(v, v); err != nil {
			t.Fatalf("version %q does not compare: %v", v, err)
		}
	})
}

func FuzzParseGPUInformation(f *testing.F) {
	for _, name := range []string{"information-v100.txt", "information-h100-uninitialised.txt"} {
		f.Add(readTestdata(f, name))
	}
	f.Add([]byte("Bus Location: 3b:00.0\nDevice Minor: 99999999999\n"))
	f.Add([]byte("0000:3b:00.0"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, _ := ParseGPUInformation(data)
		_ = Excluded(data)
		if g.PCIBusID != "" && !busIDForm.MatchString(g.PCIBusID) {
			t.Fatalf("bus id %q is not in NVML's form", g.PCIBusID)
		}
		if id, err := NormalizeBusID(string(data)); err == nil {
			if !busIDForm.MatchString(id) {
				t.Fatalf("NormalizeBusID(%q) = %q, not NVML's form", data, id)
			}
			if again, err := NormalizeBusID(id); err != nil || again != id {
				t.Fatalf("NormalizeBusID is not idempotent on %q: %q, %v", id, again, err)
			}
		}
	})
}

func FuzzCgroupValues(f *testing.F) {
	f.Add("max", "max 100000")
	f.Add("8589934592\n", "200000 100000\n")
	f.Add("9223372036854771712\n", "-1\n")
	f.Add("400000", "100000")
	f.Add("0::/system.slice/docker-abc.scope\n11:memory:/docker/abc", "12:cpu,cpuacct:/")
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, s := range []string{a, b} {
			if n, err := ParseMemoryMax(s); err != nil && n != 0 {
				t.Fatalf("ParseMemoryMax(%q) = %d with error", s, n)
			}
			if n, err := ParseMemoryLimitInBytes(s); n >= v1Unlimited || (err != nil && n != 0) {
				t.Fatalf("ParseMemoryLimitInBytes(%q) = %d, %v", s, n, err)
			}
			if c, err := ParseCPUMax(s); c < 0 || (err != nil && c != 0) {
				t.Fatalf("ParseCPUMax(%q) = %v, %v", s, c, err)
			}
			unified, v1 := parseProcCgroup([]byte(s))
			if unified != "" && unified[0] != '/' {
				t.Fatalf("unified path %q is not absolute", unified)
			}
			for _, dir := range ancestors("/sys/fs/cgroup", unified) {
				if !strings.HasPrefix(dir, "/sys/fs/cgroup") {
					t.Fatalf("ancestor %q leaves the mount", dir)
				}
			}
			_ = v1
		}
		if c, err := ParseCFSQuota(a, b); c < 0 || (err != nil && c != 0) {
			t.Fatalf("ParseCFSQuota(%q, %q) = %v, %v", a, b, c, err)
		}
	})
}

// sameGPU compares the fields procfs can fill.
func sameGPU(a, b facts.GPU) bool {
	return a.Index == b.Index && a.Name == b.Name && a.UUID == b.UUID && a.PCIBusID == b.PCIBusID &&
		a.Brand == "" && a.ComputeCapability == ""
}
