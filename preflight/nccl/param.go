package nccl

import "strings"

// Param is ncclLoadParam: the variable's value read by strtoll(s, NULL, 0)
// (a "0x" prefix is hexadecimal, a leading "0" octal, and reading stops at
// the first byte that is no digit, so "3x" is 3 and "x" is 0), or def when
// it is unset, empty or out of range.
func Param(s Settings, name string, def int64) int64 {
	v, ok := s.Get(name)
	if !ok || v == "" {
		return def
	}
	n, ok := strtoll(v)
	if !ok {
		return def
	}
	return n
}

// strtoll is C's strtoll with base 0; ok is false on overflow (ERANGE).
func strtoll(s string) (int64, bool) {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg, s = s[0] == '-', s[1:]
	}
	base := uint64(10)
	switch {
	case len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && digit(s[2], 16) >= 0:
		base, s = 16, s[2:]
	case len(s) > 0 && s[0] == '0':
		base = 8
	}
	limit := uint64(1<<63 - 1)
	if neg {
		limit++
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		d := digit(s[i], base)
		if d < 0 {
			break
		}
		if n > (limit-uint64(d))/base {
			return 0, false
		}
		n = n*base + uint64(d)
	}
	if neg {
		return -int64(n), true
	}
	return int64(n), true
}

// digit is b's value as a digit of base, or -1.
func digit(b byte, base uint64) int {
	var d int
	switch {
	case '0' <= b && b <= '9':
		d = int(b - '0')
	case 'a' <= b && b <= 'z':
		d = int(b-'a') + 10
	case 'A' <= b && b <= 'Z':
		d = int(b-'A') + 10
	default:
		return -1
	}
	if uint64(d) >= base {
		return -1
	}
	return d
}
