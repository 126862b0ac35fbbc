// Package jsonenc appends JSON strings and numbers byte for byte as
// encoding/json's Marshal writes them, without reflection: the run-time
// half of the encoders jsongen generates.
package jsonenc

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// AppendString appends s as a quoted JSON string.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
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
			// They end a line in JavaScript before ES2019.
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

// Encoder holds a generated encoding's first error.
type Encoder struct{ err error }

// Float appends f, or notes the first NaN or infinity, naming where.
func (e *Encoder) Float(b []byte, f float64, where string) []byte {
	out, err := AppendFloat(b, f)
	if err != nil && e.err == nil {
		e.err = fmt.Errorf("%s is %v: %w", where, f, err)
	}
	return out
}

// Err is the encoding's first error.
func (e *Encoder) Err() error { return e.err }

// ErrNotFinite is AppendFloat's error for NaN and the infinities.
var ErrNotFinite = errors.New("NaN and infinity have no JSON number")

// AppendFloat appends f as the shortest decimal that reads back as f,
// positional between 1e-6 and 1e21, else "1e-7", "1e+21".
func AppendFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, ErrNotFinite
	}
	if a := math.Abs(f); a == 0 || (a >= 1e-6 && a < 1e21) {
		return strconv.AppendFloat(dst, f, 'f', -1, 64), nil
	}
	dst = strconv.AppendFloat(dst, f, 'e', -1, 64)
	// strconv writes "1e-07" where encoding/json writes "1e-7".
	if n := len(dst); dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
		dst[n-2] = dst[n-1]
		dst = dst[:n-1]
	}
	return dst, nil
}

// SortedKeys returns m's keys in byte order, as encoding/json writes them.
func SortedKeys[M ~map[K]V, K ~string, V any](m M) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
