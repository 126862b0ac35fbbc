package fatbin

import (
	"testing"
)

// Each case is a spelling a framework or nvcc uses for a target
// (docs/fatbin.md "Loading rules").
func TestParseArch(t *testing.T) {
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
			got, err := ParseArch(tt.in)
			if err != nil {
				t.Fatalf("ParseArch(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("ParseArch(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
			if s := got.String(); s != tt.str {
				t.Errorf("String() = %q, want %q", s, tt.str)
			}
		})
	}
}

func TestParseArchRejects(t *testing.T) {
	for _, in := range []string{
		"", "sm_", "sm_9", "9", "a", "sm_90b", "sm_1000", "100.0", "9.10", "9.", ".9", "9.0.1",
		"compute_86+PTX", "sm90", "Ampere", "sm_x0", "0.5", "sm_05", "+ptx", "8.6+", "8.6 9.0",
	} {
		if a, err := ParseArch(in); err == nil {
			t.Errorf("ParseArch(%q) = %+v, want an error", in, a)
		}
	}
}

// The suffix decision reads the cubin's e_flags only where the SM agrees.
func TestArchSuffix(t *testing.T) {
	cubinHead := func(abi byte, flags uint32) []byte {
		h := make([]byte, 64)
		copy(h, []byte{0x7f, 'E', 'L', 'F', 2, 1, 1, 0x33, abi})
		h[18] = 190
		h[0x30], h[0x31], h[0x32], h[0x33] = byte(flags), byte(flags>>8), byte(flags>>16), byte(flags>>24)
		return h
	}
	tests := []struct {
		name  string
		kind  Kind
		sm    uint32
		flags uint64
		head  []byte
		want  byte
	}{
		{"ABI7Accel", KindCubin, 90, 0, cubinHead(7, 90|0x800), 'a'},
		{"ABI7Plain", KindCubin, 90, 0, cubinHead(7, 90|0x400), 0},
		{"ABI7SMDisagrees", KindCubin, 90, 0, cubinHead(7, 80|0x800), 0},
		{"ABI8Accel", KindCubin, 100, 0, cubinHead(8, 100<<8|0x8), 'a'},
		// sgl_kernel's sm_90 ABI-8 e_flags (a public analysis of common_ops.abi3.so).
		{"ABI8RealSM90", KindCubin, 90, 0, cubinHead(8, 0x06005a04), 0},
		{"ABI8SMDisagrees", KindCubin, 120, 0, cubinHead(8, 100<<8|0x8), 0},
		{"NotACudaELF", KindCubin, 90, 0, append([]byte("\x7fELF\x02\x01\x01\x00\x07"), make([]byte, 55)...), 0},
		{"ShortHead", KindCubin, 90, 0, cubinHead(7, 90|0x800)[:40], 0},
		{"CompressedNoHead", KindCubin, 90, 0, nil, 0},
		{"PTXTarget", KindPTX, 90, 0, []byte("//\n.version 8.4\n.target sm_90a\n.address_size 64\n"), 'a'},
		{"PTXTargetWithOptions", KindPTX, 90, 0, []byte(".version 7.8\n.target sm_90a, debug\n"), 'a'},
		{"PTXFamily", KindPTX, 100, 0, []byte(".version 8.8\n.target sm_100f\n"), 'f'},
		{"PTXPlain", KindPTX, 80, 0, []byte(".version 7.8\n.target sm_80\n"), 0},
		{"PTXCutTarget", KindPTX, 90, 0, []byte(".version 8.4\n.target sm_90"), 0},
		{"PTXTargetDisagrees", KindPTX, 90, 0, []byte(".target sm_100a\n"), 0},
		{"PTXTargetNotFirstWord", KindPTX, 90, 0, []byte(".targets sm_90a\n"), 0},
		{"UnknownKind", Kind(8), 90, 0, []byte(".target sm_90a\n"), 0},
		// nvcc 12.4's entry flags (testdata/nvcc): 0x100000 marks 'a'.
		{"FlagPTXCompressed", KindPTX, 90, 0x102011, nil, 'a'},
		{"FlagCubinCompressed", KindCubin, 90, 0x102011, nil, 'a'},
		{"NoFlagPTXCompressed", KindPTX, 90, 0x2011, nil, 0},
		// The device-link stub of an 'a' build: flagged, but e_flags say plain.
		{"FlagStubPlainELF", KindCubin, 90, 0x100011, cubinHead(7, 90|0x400), 0},
		{"FlagUnknownKind", Kind(8), 90, 0x100011, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := archSuffix(tt.kind, tt.sm, tt.flags, tt.head); got != tt.want {
				t.Errorf("archSuffix = %q, want %q", got, tt.want)
			}
		})
	}
}

func FuzzParseArch(f *testing.F) {
	for _, s := range []string{
		"sm_90", "sm_90a", "compute_80", "compute_100f", "90", "9.0", "8.6+PTX", "sm_121a", "12.0",
		"5.2 6.0", "", "sm_", "9.", "+PTX", "compute_86+PTX", "sm_1000",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseArch(s)
		if err != nil {
			return
		}
		back, err := ParseArch(a.String())
		if err != nil || back != a {
			t.Fatalf("ParseArch(%q) = %+v; its String %q parses to %+v, %v", s, a, a.String(), back, err)
		}
		if a.Major < 1 || a.Major > 99 || a.Minor < 0 || a.Minor > 9 || (a.Suffix != 0 && a.Suffix != 'a' && a.Suffix != 'f') {
			t.Fatalf("ParseArch(%q) = %+v: out of range", s, a)
		}
	})
}
