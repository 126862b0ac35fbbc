// Package jsonenc appends JSON strings and numbers exactly as encoding/json's
// Marshal writes them, without reflection. It is the run-time half of the
// encoders that jsongen generates (report/record_json.go): encoding/json
// builds an encoder for each struct type by reflection on its first use in
// a process, which a gpu-preflight start, encoding one record and then
// exec'ing, paid on every run.
//
// "Exactly" is the contract, checked against encoding/json in this
// package's tests and fuzz targets: the strings are HTML-safe (<, > and &
// as \u003c, \u003e, \u0026), U+2028 and U+2029 are escaped, control
// characters are \b, \f, \n, \r, \t or \u00XX, and each byte of invalid
// UTF-8 is U+FFFD.
package jsonenc

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// AppendString appends s as a quoted JSON string.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	// done is where the bytes not yet copied start: runs that need no
	// escape are copied whole.
	done := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= ' ' && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[done:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default: // another control character, or <, > and &
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			done = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[done:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			// Line and paragraph separators end a line in JavaScript
			// before ES2019, so a JSON document pasted into a script
			// would break.
			dst = append(dst, s[done:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		done = i
	}
	dst = append(dst, s[done:]...)
	return append(dst, '"')
}

// ErrNotFinite is AppendFloat's error for NaN and the infinities, which
// JSON has no number for (encoding/json's Marshal fails on them too).
var ErrNotFinite = errors.New("NaN and infinity have no JSON number")

// AppendFloat appends f as a JSON number, the shortest decimal that reads
// back as f: positional between 1e-6 and 1e21 (and for 0 and -0), else
// in exponent form with at least one exponent digit ("1e-7", "1e+21"). A
// NaN or an infinity appends nothing and returns ErrNotFinite.
func AppendFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, ErrNotFinite
	}
	if a := math.Abs(f); a == 0 || (a >= 1e-6 && a < 1e21) {
		return strconv.AppendFloat(dst, f, 'f', -1, 64), nil
	}
	dst = strconv.AppendFloat(dst, f, 'e', -1, 64)
	// strconv writes at least two exponent digits: "1e-07" becomes
	// "1e-7". A positive exponent here is 21 or more, already two digits.
	if n := len(dst); dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
		dst[n-2] = dst[n-1]
		dst = dst[:n-1]
	}
	return dst, nil
}

// SortedKeys returns m's keys in byte order, the order encoding/json
// writes a map's members in.
func SortedKeys[M ~map[K]V, K ~string, V any](m M) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
