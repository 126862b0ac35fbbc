// Package jsonbound decodes JSON that anyone who can write the image could
// have written, with memory bounded by the document's shape as well as its
// size, which encoding/json does not bound (a million empty strings decode
// into 16 MiB of headers). Unmarshal counts values and nesting first, in a
// pass that allocates nothing.
package jsonbound

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Limits bound one document.
type Limits struct {
	Bytes  int // the longest document read
	Depth  int // the deepest nesting of objects and arrays
	Values int // every object, array, string, number and literal, member names included
}

// ErrTooLarge is wrapped by the errors of a document past its Limits.
var ErrTooLarge = errors.New("JSON document past its bounds")

// Check tells whether data is within l without decoding or validating it.
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
