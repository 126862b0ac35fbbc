// Package version compares dotted numeric versions the way
// libnvidia-container does (src/cli/dsl.c, dsl_compare_version), so that a
// driver, CUDA or compute-capability comparison here agrees with the NVIDIA
// Container Toolkit to the last rule:
//
//   - a version is digits and dots only; anything else is invalid;
//   - components compare numerically, left to right ("02" == "2", "12.10" > "12.9");
//   - runs of dots separate components ("1..2" == "1.2");
//   - once one side runs out, trailing zeros and dots on the other are
//     ignored ("470.0" == "470", "471.00" == "471"); any other remainder
//     makes that side greater ("470.57.02" > "470");
//   - a component of 2^64-1 or more is invalid (strtoumax saturates).
package version

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrInvalid is wrapped by every error Compare returns.
var ErrInvalid = errors.New("invalid version")

// Valid reports whether s contains only digits and dots and, where it is
// not empty, starts with a digit.
func Valid(s string) bool {
	if strings.Trim(s, "0123456789.") != "" {
		return false
	}
	return s == "" || s[0] != '.'
}

// Compare returns -1, 0 or +1 as a is less than, equal to or greater than b.
// It fails, wrapping ErrInvalid, where libnvidia-container's comparison
// returns -1 ("invalid expression").
func Compare(a, b string) (int, error) {
	for _, s := range [...]string{a, b} {
		if strings.Trim(s, "0123456789.") != "" {
			return 0, fmt.Errorf("%w %q: only digits and dots are allowed", ErrInvalid, s)
		}
	}
	for a != "" && b != "" {
		na, ra, err := leadingNumber(a)
		if err != nil {
			return 0, err
		}
		nb, rb, err := leadingNumber(b)
		if err != nil {
			return 0, err
		}
		if na != nb {
			if na < nb {
				return -1, nil
			}
			return 1, nil
		}
		a = strings.TrimLeft(ra, ".")
		b = strings.TrimLeft(rb, ".")
	}
	a = strings.TrimLeft(a, ".0")
	b = strings.TrimLeft(b, ".0")
	switch {
	case a == "" && b == "":
		return 0, nil
	case a != "":
		return 1, nil
	default:
		return -1, nil
	}
}

// leadingNumber splits the decimal number at the start of s from the rest.
func leadingNumber(s string) (uint64, string, error) {
	end := 0
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end == 0 {
		return 0, "", fmt.Errorf("%w %q: a component must start with a digit", ErrInvalid, s)
	}
	n, err := strconv.ParseUint(s[:end], 10, 64)
	if err != nil || n == ^uint64(0) {
		return 0, "", fmt.Errorf("%w %q: component too large", ErrInvalid, s)
	}
	return n, s[end:], nil
}

// MustCompare is Compare for versions known to be valid, such as table rows.
// It panics on an invalid version: a table with a typo is a programming error.
func MustCompare(a, b string) int {
	c, err := Compare(a, b)
	if err != nil {
		panic(err)
	}
	return c
}

// Less reports whether a < b; invalid versions are never less.
func Less(a, b string) bool {
	c, err := Compare(a, b)
	return err == nil && c < 0
}

// AtLeast reports whether a >= b; invalid versions never are.
func AtLeast(a, b string) bool {
	c, err := Compare(a, b)
	return err == nil && c >= 0
}

// Prefix returns the first n dot-separated components of s, e.g.
// Prefix("11.8.20220929", 2) == "11.8". Components beyond s are not added.
// Anything from the first character that is not a digit or dot is dropped.
func Prefix(s string, n int) string {
	end := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if end >= 0 {
		s = s[:end]
	}
	parts := strings.Split(strings.Trim(s, "."), ".")
	var out []string
	for _, p := range parts {
		if p == "" {
			continue
		}
		out = append(out, p)
		if len(out) == n {
			break
		}
	}
	return strings.Join(out, ".")
}

// Major returns the first component of s as a number, or -1.
func Major(s string) int {
	n, err := strconv.Atoi(Prefix(s, 1))
	if err != nil {
		return -1
	}
	return n
}
