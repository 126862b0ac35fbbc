//go:build cgo

package main

import (
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
)

// The keys are nvml.h's numbers, not go-nvml's names: the test proves what
// the probe reports for each value NVML can return.
func TestBrandNameUsesLibnvidiaContainerStrings(t *testing.T) {
	tests := map[gonvml.BrandType]string{
		0: "Unknown", 1: "Quadro", 2: "Tesla", 3: "NVS", 4: "GRID", 5: "GeForce", 6: "TITAN",
		7: "VApps", 8: "VPC", 9: "VCS", 10: "VWS", 11: "CloudGaming", 12: "QuadroRTX",
		13: "NvidiaRTX", 14: "Nvidia", 15: "GeForceRTX", 16: "TitanRTX",
		// Brands the toolkit's switch does not name fall to its default.
		17: "Unknown", 18: "Unknown", 19: "Unknown", -1: "Unknown", 1000: "Unknown",
	}
	for in, want := range tests {
		if got := name(brandNames, in); got != want {
			t.Errorf("brand %d is %q, want %q", in, got, want)
		}
	}
}

func TestArchitectureName(t *testing.T) {
	tests := map[gonvml.DeviceArchitecture]string{5: "Volta", 7: "Ampere", 8: "Ada", 9: "Hopper", 10: "Blackwell", 0xffffffff: "Unknown", 14: "Unknown"}
	for in, want := range tests {
		if got := name(architectureNames, in); got != want {
			t.Errorf("architecture %d is %q, want %q", in, got, want)
		}
	}
}
