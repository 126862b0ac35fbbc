package nvml

import "testing"

func TestBrandNameUsesLibnvidiaContainerStrings(t *testing.T) {
	tests := map[int]string{
		0: "Unknown", 1: "Quadro", 2: "Tesla", 3: "NVS", 4: "GRID", 5: "GeForce", 6: "TITAN",
		7: "VApps", 8: "VPC", 9: "VCS", 10: "VWS", 11: "CloudGaming", 12: "QuadroRTX",
		13: "NvidiaRTX", 14: "Nvidia", 15: "GeForceRTX", 16: "TitanRTX",
		// Brands the toolkit's switch does not name fall to its default.
		17: "Unknown", 18: "Unknown", 19: "Unknown", -1: "Unknown", 1000: "Unknown",
	}
	for in, want := range tests {
		if got := BrandName(in); got != want {
			t.Errorf("BrandName(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestArchitectureName(t *testing.T) {
	tests := map[uint32]string{5: "Volta", 7: "Ampere", 8: "Ada", 9: "Hopper", 10: "Blackwell", 0xffffffff: "Unknown", 14: "Unknown"}
	for in, want := range tests {
		if got := ArchitectureName(in); got != want {
			t.Errorf("ArchitectureName(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestCUDAVersionUsesNVMLMacros(t *testing.T) {
	tests := map[int]string{
		12040: "12.4", 12030: "12.3", 11040: "11.4", 12020: "12.2", 12080: "12.8",
		// (v%1000)/10, not libnvidia-container's v%100/10 which gives "13.0".
		13100: "13.10", 13010: "13.1", 10000: "10.0",
		0: "", -5: "",
	}
	for in, want := range tests {
		if got := CUDAVersion(in); got != want {
			t.Errorf("CUDAVersion(%d) = %q, want %q", in, got, want)
		}
	}
}
