package image

import "testing"

func TestVersionTags(t *testing.T) {
	cu := []struct{ in, want string }{
		{"2.1.0+cu118", "11.8"}, {"2.1.0+cu121", "12.1"}, {"2.7.0+cu128", "12.8"},
		{"1.7.1+cu92", "9.2"}, {"2.1.0+cpu", ""}, {"2.1.0", ""}, {"2.1.0a0+32f93b1", ""},
		{"2.9.0+cu130", "13.0"},
	}
	for _, tt := range cu {
		if got := localCUDA(tt.in); got != tt.want {
			t.Errorf("localCUDA(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	post := []struct{ in, want string }{
		{"2.6.0.post118", "11.8"}, {"2.6.0.post120", "12.0"}, {"2.5.2.post117", "11.7"},
		{"2.6.0", ""}, {"1.8.5.post107", ""}, // CUDA 10.0 + cuDNN 7: not a CUDA version
		{"3.0.0", ""}, {"2.6.0.postabc", ""},
	}
	for _, tt := range post {
		if got := paddlePostCUDA(tt.in); got != tt.want {
			t.Errorf("paddlePostCUDA(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	jax := []struct {
		in          string
		cuda, cudnn string
		ok          bool
	}{
		{"0.4.28+cuda12.cudnn89", "12", "8.9", true},
		{"0.4.13+cuda11.cudnn86", "11", "8.6", true},
		{"0.1.75+cuda111", "11.1", "", true},
		{"0.1.69+cuda110.cudnn805", "11.0", "8.0.5", true},
		{"0.4.30", "", "", false},
	}
	for _, tt := range jax {
		got, ok := parseJaxlibVersion(tt.in)
		if ok != tt.ok || got.CUDA != tt.cuda || got.CuDNN != tt.cudnn {
			t.Errorf("parseJaxlibVersion(%q) = %+v %v", tt.in, got, ok)
		}
	}
	env := []struct{ in, want string }{
		{"2.25.1-1", "2.25.1"}, {"9.8.0.87-1", "9.8.0.87"}, {"2.19.3", "2.19.3"},
		{"8.9.5.29", "8.9.5.29"}, {"2.19.3+cuda12.2", "2.19.3"}, {"latest", ""}, {"", ""},
	}
	for _, tt := range env {
		if got := envVersion(tt.in); got != tt.want {
			t.Errorf("envVersion(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzVersionTags(f *testing.F) {
	for _, s := range []string{
		"2.1.0+cu118", "2.6.0.post118", "0.4.28+cuda12.cudnn89", "0.1.69+cuda110.cudnn805",
		"2.25.1-1", "9.8.0.87-1", "libcudnn.so.8.9.7", "libnccl.so.2",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, v := range []string{localCUDA(s), paddlePostCUDA(s)} {
			if v != "" && !dotted(v) {
				t.Fatalf("CUDA %q from %q is not a version", v, s)
			}
		}
		if tag, ok := parseJaxlibVersion(s); ok && tag.CUDA == "" {
			t.Fatalf("parseJaxlibVersion(%q) ok without CUDA", s)
		}
		if v := envVersion(s); v != "" && !dotted(v) && !digitsOnly(v) {
			t.Fatalf("envVersion(%q) = %q", s, v)
		}
		for _, base := range []string{"libcudnn.so", "libnccl.so"} {
			if v, ok := sonameVersion(s, base); ok && !dotted(v) && !digitsOnly(v) {
				t.Fatalf("sonameVersion(%q) = %q", s, v)
			}
		}
	})
}

func TestSonameVersion(t *testing.T) {
	tests := []struct{ file, base, want string }{
		{"libcudnn.so.8.9.7", "libcudnn.so", "8.9.7"},
		{"libnccl.so.2.19.3", "libnccl.so", "2.19.3"},
		{"libnccl.so.2", "libnccl.so", "2"},
		{"libnvinfer.so.10.3.0", "libnvinfer.so", "10.3.0"},
		{"libcudnn_ops.so.9.1.0", "libcudnn.so", ""},
		{"libcudnn.so", "libcudnn.so", ""},
		{"libnvinfer.so.8.6.1.bak", "libnvinfer.so", ""},
	}
	for _, tt := range tests {
		got, ok := sonameVersion(tt.file, tt.base)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("sonameVersion(%q) = %q %v, want %q", tt.file, got, ok, tt.want)
		}
	}
}
