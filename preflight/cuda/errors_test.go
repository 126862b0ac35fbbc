package cuda

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// RealNames parses testdata/libcuda-error-names.txt: what Debian's real
// libcuda1 calls each code.
func realNames(t *testing.T) map[int]string {
	t.Helper()
	data, err := os.ReadFile("testdata/libcuda-error-names.txt")
	if err != nil {
		t.Fatal(err)
	}
	names := map[int]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		code, err := strconv.Atoi(f[0])
		if err != nil || len(f) != 3 {
			t.Fatalf("bad line %q", line)
		}
		names[code] = f[1]
	}
	if len(names) < 90 {
		t.Fatalf("only %d codes in the listing", len(names))
	}
	return names
}

// Every code the table explains carries CUDA's own name for it, as the
// real driver library spells it.
func TestMeaningsUseCUDAsOwnNames(t *testing.T) {
	real := realNames(t)
	for code, m := range Meanings {
		if real[code] != m.Name {
			t.Errorf("code %d: table says %q, libcuda says %q", code, m.Name, real[code])
		}
		if m.Remedy == "" {
			t.Errorf("code %d (%s) has no remedy", code, m.Name)
		}
	}
}

// The codes the issue names are all explained, each with the fault it is.
func TestTheNamedFailuresAreExplained(t *testing.T) {
	for code, fault := range map[int]Fault{802: NodeFault, 803: Mismatch, 804: Mismatch, 46: NodeFault, 2: NodeFault, 222: Mismatch, 218: Mismatch, 209: Mismatch} {
		m, ok := Meanings[code]
		if !ok || m.Fault != fault {
			t.Errorf("code %d: %+v (known %v), want fault %v", code, m, ok, fault)
		}
	}
	for code, words := range map[int]string{802: "nvidia-fabricmanager", 803: "/usr/local/cuda/compat", 46: "exclusive-process", 209: "compiled for this GPU"} {
		if !strings.Contains(Meanings[code].Remedy, words) {
			t.Errorf("the remedy for %d does not say %q: %s", code, words, Meanings[code].Remedy)
		}
	}
}

func TestNameFallsBackToTheTableThenTheNumber(t *testing.T) {
	for _, tc := range []struct {
		code       int
		given, out string
	}{
		{803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"},
		{803, "", "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"},
		{4242, "", "CUresult 4242"},
	} {
		if got := Name(tc.code, tc.given); got != tc.out {
			t.Errorf("Name(%d, %q) = %q, want %q", tc.code, tc.given, got, tc.out)
		}
	}
	if m := Lookup(4242); m.Fault != Mismatch || m.Remedy == "" {
		t.Errorf("an unknown code: %+v", m)
	}
}

func TestFormatUUIDMatchesNVML(t *testing.T) {
	b := []byte{0x5e, 0xed, 0, 1, 0, 0, 0x40, 0, 0x80, 1, 0, 0, 0, 0, 0x10, 0}
	if got, want := FormatUUID(b), "GPU-5eed0001-0000-4000-8001-000000001000"; got != want {
		t.Errorf("FormatUUID = %q, want %q", got, want)
	}
	if FormatUUID(b[:15]) != "" {
		t.Error("a short UUID was formatted")
	}
}
