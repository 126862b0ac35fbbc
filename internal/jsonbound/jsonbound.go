// Package jsonbound decodes JSON documents that gpu-preflight did not
// write, or that anyone who can write the image could have replaced, with
// memory bounded by the document's shape as well as its size.
// encoding/json bounds neither: a 4 MiB object of 700 000 one-letter
// members decodes into a map of 44 MiB, and an array of a million empty
// strings into 16 MiB of string headers before the slice is grown. Unmarshal
// counts the document's values and its nesting first, in one pass that
// allocates nothing, and only then decodes it.
package jsonbound

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Limits bound one document.
type Limits struct {
	// Bytes is the longest document read.
	Bytes int
	// Depth is the deepest nesting of objects and arrays.
	Depth int
	// Values bounds the document's values: every object, array, string,
	// number and literal, member names included.
	Values int
}

// ErrTooLarge is wrapped by the errors of a document past its Limits.
var ErrTooLarge = errors.New("JSON document past its bounds")

// Check tells whether data is within l, without decoding it. It does not
// validate the JSON: encoding/json does that after.
func Check(data []byte, l Limits) error {
	if len(data) > l.Bytes {
		return fmt.Errorf("%w: %d bytes (at most %d)", ErrTooLarge, len(data), l.Bytes)
	}
	depth, values := 0, 0
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case ' ', '\t', '\n', '\r', ',', ':':
			continue
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			if depth++; depth > l.Depth {
				return fmt.Errorf("%w: nested more than %d deep at byte %d", ErrTooLarge, l.Depth, i)
			}
		case '}', ']':
			depth--
			continue
		default: // a number or a literal, up to the next delimiter
			for i+1 < len(data) && !delimiter(data[i+1]) {
				i++
			}
		}
		if values++; values > l.Values {
			return fmt.Errorf("%w: more than %d values (the last read at byte %d)", ErrTooLarge, l.Values, i)
		}
	}
	return nil
}

func delimiter(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', ',', ':', '{', '}', '[', ']', '"':
		return true
	}
	return false
}

// Unmarshal is json.Unmarshal of a document that Check accepts.
func Unmarshal(data []byte, v any, l Limits) error {
	if err := Check(data, l); err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}
