package gpuarch

import "testing"

// Each case is a spelling a framework or nvcc uses for a target
// (docs/fatbin.md "Loading rules").
func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Arch
		str  string
	}{
		{"NvccRealArch", "sm_90", Arch{Major: 9, Minor: 0}, "sm_90"},
		{"NvccArchSpecific", "sm_90a", Arch{Major: 9, Minor: 0, Suffix: 'a'}, "sm_90a"},
		{"NvccThreeDigits", "sm_100a", Arch{Major: 10, Minor: 0, Suffix: 'a'}, "sm_100a"},
		{"NvccMinorOne", "sm_121", Arch{Major: 12, Minor: 1}, "sm_121"},
		{"NvccVirtualArch", "compute_80", Arch{Major: 8, Minor: 0, PTX: true}, "compute_80"},
		{"NvccFamilyVirtual", "compute_100f", Arch{Major: 10, Minor: 0, Suffix: 'f', PTX: true}, "compute_100f"},
		{"PaddleCompiledCudaArchs", "86", Arch{Major: 8, Minor: 6}, "sm_86"},
		{"BareWithSuffix", "90a", Arch{Major: 9, Minor: 0, Suffix: 'a'}, "sm_90a"},
		{"TorchDotted", "9.0", Arch{Major: 9, Minor: 0}, "sm_90"},
		{"TorchDottedTwoDigitMajor", "12.0", Arch{Major: 12, Minor: 0}, "sm_120"},
		{"TorchDottedSuffix", "9.0a", Arch{Major: 9, Minor: 0, Suffix: 'a'}, "sm_90a"},
		{"TorchPlusPTXIsThePTXPart", "8.6+PTX", Arch{Major: 8, Minor: 6, PTX: true}, "compute_86"},
		{"PlusPTXBare", "90+ptx", Arch{Major: 9, Minor: 0, PTX: true}, "compute_90"},
		{"CaseAndSpaceIgnored", "  SM_75 ", Arch{Major: 7, Minor: 5}, "sm_75"},
		{"OldArch", "sm_35", Arch{Major: 3, Minor: 5}, "sm_35"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("Parse(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
			if s := got.String(); s != tt.str {
				t.Errorf("String() = %q, want %q", s, tt.str)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	for _, in := range []string{
		"", "sm_", "sm_9", "9", "a", "sm_90b", "sm_1000", "100.0", "9.10", "9.", ".9", "9.0.1",
		"compute_86+PTX", "sm90", "Ampere", "sm_x0", "0.5", "sm_05", "+ptx", "8.6+", "8.6 9.0",
	} {
		if a, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", in, a)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"sm_90", "sm_90a", "compute_80", "compute_100f", "90", "9.0", "8.6+PTX", "sm_121a", "12.0",
		"5.2 6.0", "", "sm_", "9.", "+PTX", "compute_86+PTX", "sm_1000",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := Parse(s)
		if err != nil {
			return
		}
		back, err := Parse(a.String())
		if err != nil || back != a {
			t.Fatalf("Parse(%q) = %+v; its String %q parses to %+v, %v", s, a, a.String(), back, err)
		}
		if a.Major < 1 || a.Major > 99 || a.Minor < 0 || a.Minor > 9 || (a.Suffix != 0 && a.Suffix != 'a' && a.Suffix != 'f') {
			t.Fatalf("Parse(%q) = %+v: out of range", s, a)
		}
	})
}
