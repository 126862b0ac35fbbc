package fatbin

import (
	"testing"
)

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
