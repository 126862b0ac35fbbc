package image

import (
	"slices"
	"strings"
)

// localCUDA returns the CUDA a wheel's local version tag names
// ("2.1.0+cu118" -> "11.8"), "" without a +cuNNN tag.
func localCUDA(version string) string {
	_, local, ok := strings.Cut(version, "+")
	if !ok {
		return ""
	}
	for _, part := range strings.FieldsFunc(local, func(r rune) bool { return r == '.' || r == '_' || r == '-' }) {
		if n, ok := strings.CutPrefix(part, "cu"); ok && digitsOnly(n) {
			return cudaFromDigits(n)
		}
	}
	return ""
}

// cudaFromDigits reads the packed "118" of cu118 as "11.8".
func cudaFromDigits(n string) string {
	if len(n) < 2 {
		return ""
	}
	major := strings.TrimLeft(n[:len(n)-1], "0")
	if major == "" {
		return ""
	}
	return major + "." + n[len(n)-1:]
}

// envVersion cleans a version a variable states of its Debian revision and
// build suffix ("2.25.1-1", "2.19.3+cuda12.2"); "" when no number is left.
func envVersion(v string) string {
	v = strings.TrimSpace(v)
	if i := strings.IndexAny(v, "-+~ "); i >= 0 {
		v = v[:i]
	}
	if !dotted(v) && !digitsOnly(v) {
		return ""
	}
	return v
}

// sonameVersion returns the version a library file name carries after
// base: "8.9.7" of "libcudnn.so.8.9.7", "2" of "libnccl.so.2".
func sonameVersion(file, base string) (string, bool) {
	v, ok := strings.CutPrefix(file, base+".")
	if !ok || !(dotted(v) || digitsOnly(v)) {
		return "", false
	}
	return v, true
}

// dotted reports whether s is two or more dot-separated decimal numbers.
func dotted(s string) bool {
	parts := strings.Split(s, ".")
	return len(parts) >= 2 && !slices.ContainsFunc(parts, func(p string) bool { return !digitsOnly(p) })
}

// digitsOnly reports whether s is one or more ASCII digits.
func digitsOnly(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// majorMinor trims a version to major.minor ("11.8.89" -> "11.8").
func majorMinor(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}

// components counts the dot-separated parts of a version; 0 for "".
func components(v string) int {
	if v == "" {
		return 0
	}
	return strings.Count(v, ".") + 1
}

// newer reports whether dotted version a is above b ("" is below all).
func newer(a, b string) bool {
	if b == "" {
		return true
	}
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		if len(pa[i]) != len(pb[i]) {
			return len(pa[i]) > len(pb[i])
		}
		if pa[i] != pb[i] {
			return pa[i] > pb[i]
		}
	}
	return len(pa) > len(pb)
}

// cudaMajor is "12" for "12.1"; "" when cuda is not a version.
func cudaMajor(cuda string) string {
	major, _, _ := strings.Cut(cuda, ".")
	if major == "" || !digitsOnly(major) {
		return ""
	}
	return major
}
