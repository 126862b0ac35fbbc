package cuda

import "testing"

func TestVersionUsesNVMLMacros(t *testing.T) {
	tests := map[int]string{
		12040: "12.4", 12030: "12.3", 11040: "11.4", 12020: "12.2", 12080: "12.8",
		// (v%1000)/10, not libnvidia-container's v%100/10 which gives "13.0".
		13100: "13.10", 13010: "13.1", 10000: "10.0",
		0: "", -5: "",
	}
	for in, want := range tests {
		if got := Version(in); got != want {
			t.Errorf("Version(%d) = %q, want %q", in, got, want)
		}
	}
}
