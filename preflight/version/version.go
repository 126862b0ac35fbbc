// Package version compares dotted numeric versions as libnvidia-container
// does (src/cli/dsl.c, dsl_compare_version): digits and dots only,
// components compared numerically, runs of dots one separator, trailing
// zeros ignored ("471.00" == "471"), a component of 2^64-1 or more invalid
// (strtoumax saturates).
package version

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrInvalid is wrapped by every error Compare returns.
var ErrInvalid = errors.New("invalid version")

// Valid reports whether s is digits and dots, starting with a digit when not empty.
func Valid(s string) bool {
	if strings.Trim(s, "0123456789.") != "" {
		return false
	}
	return s == "" || s[0] != '.'
}

// Compare returns -1, 0 or +1 as a is less than, equal to or greater than
// b; it fails, wrapping ErrInvalid, where libnvidia-container's does.
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

// MustCompare is Compare for valid versions such as table rows: a typo panics.
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

// Prefix returns the first n components of s ("11.8.20220929", 2: "11.8"),
// dropping everything from the first character that is not a digit or dot.
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
