package container

import "testing"

func TestCUDALinkVersionNamesOnlyCudaXDotY(t *testing.T) {
	for name, want := range map[string]string{
		"cuda-12.2": "12.2", "cuda-11.8": "11.8", "cuda-9.0": "9.0",
		"cuda": "", "cuda-12": "", "cuda-12.2.1": "", "cuda-12.": "", "cuda-.2": "",
		"cuda-12.x": "", "xcuda-12.2": "", "cuda-12.2 ": "", "cuda-+1.2": "", "cuda-١٢.٢": "",
	} {
		got, ok := cudaLinkVersion(name)
		if got != want || ok != (want != "") {
			t.Errorf("cudaLinkVersion(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
}
