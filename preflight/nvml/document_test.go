package nvml

import (
	"strings"
	"testing"
)

// Documents as the probe prints them (from the fake library's scenarios and
// the real Debian libnvidia-ml1 on a GPU-less host).
var seedDocuments = []string{
	`{"outcome":"library-not-found","error":"libnvidia-ml.so.1 could not be loaded (ERROR_LIBRARY_NOT_FOUND)","library":"libnvidia-ml.so.1","gpus":[]}`,
	`{"outcome":"driver-not-loaded","error":"Driver Not Loaded","library":"libnvidia-ml.so.1","gpus":[]}`,
	`{"outcome":"ok","library":"x","nvmlVersion":"12.550.54.15","driverVersion":"550.54.15","cudaVersion":"12.4","cudaVersionRaw":12040,"cudaVersionCall":"v2","gpus":[{"index":0,"name":"NVIDIA H100 80GB HBM3","uuid":"GPU-1","pciBusId":"00000000:18:00.0","brand":"Nvidia","computeCapability":"9.0","architecture":"Hopper","memoryBytes":85520809984,"migMode":"disabled","migPendingMode":"disabled","persistenceMode":"enabled","eccUncorrectedVolatile":0,"retiredPagesPending":false,"minor":0,"errors":{"retiredPagesPending":"Not Supported"}}]}`,
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name, in, err string
	}{
		{"library not found", seedDocuments[0], ""},
		{"driver not loaded", seedDocuments[1], ""},
		{"ok with a GPU", seedDocuments[2], ""},
		{"not JSON", `Segmentation fault`, "not its JSON document"},
		{"empty", ``, "not its JSON document"},
		{"unknown outcome", `{"outcome":"maybe","gpus":[]}`, `unknown outcome "maybe"`},
		{"runner outcome is not the probe's", `{"outcome":"timeout"}`, "unknown outcome"},
		{"GPUs without NVML", `{"outcome":"driver-not-loaded","gpus":[{"index":0}]}`, "but lists GPUs"},
		{"wrong type", `{"outcome":"ok","gpus":{}}`, "not its JSON document"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Decode([]byte(tt.in))
			if tt.err == "" {
				if err != nil || d == nil {
					t.Fatalf("Decode: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("Decode error = %v, want one containing %q", err, tt.err)
			}
		})
	}
}

func TestDecodeKeepsGPUFacts(t *testing.T) {
	d, err := Decode([]byte(seedDocuments[2]))
	if err != nil {
		t.Fatal(err)
	}
	g := d.GPUs[0]
	if g.ComputeCapability != "9.0" || g.Brand != "Nvidia" || g.PCIBusID != "00000000:18:00.0" || g.MemoryBytes != 85520809984 ||
		g.ECCUncorrectedVolatile == nil || *g.ECCUncorrectedVolatile != 0 || g.RetiredPagesPending == nil || g.Errors["retiredPagesPending"] != "Not Supported" {
		t.Errorf("GPU = %+v", g)
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range seedDocuments {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Decode(data)
		if (d == nil) == (err == nil) {
			t.Fatalf("Decode returned document %v and error %v", d, err)
		}
	})
}
