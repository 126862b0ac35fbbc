package fatbin

// lz4Prefix decodes an LZ4 block (fatbin flag 0x2000) as far as src, which
// may be a prefix of it, reaches, never past limit bytes; a malformed block
// yields what was decoded before the fault.
func lz4Prefix(src []byte, limit int) []byte { return lz4Into(nil, src, limit) }

// lz4Into is lz4Prefix into dst's storage, reused when it holds limit bytes.
func lz4Into(dst, src []byte, limit int) []byte {
	out := dst[:0]
	if cap(out) < limit {
		out = make([]byte, 0, min(limit, 8*len(src)+64))
	}
	i := 0
	// length adds the 255-runs that extend a 4-bit length of 15.
	length := func(n int) (int, bool) {
		if n != 15 {
			return n, true
		}
		for i < len(src) {
			b := src[i]
			i++
			n += int(b)
			if b != 255 || n > limit {
				return n, true
			}
		}
		return 0, false
	}
	for i < len(src) && len(out) < limit {
		token := src[i]
		i++
		lit, ok := length(int(token >> 4))
		if !ok || lit > len(src)-i {
			lit = min(lit, len(src)-i)
			out = append(out, src[i:i+min(lit, limit-len(out))]...)
			break
		}
		out = append(out, src[i:i+min(lit, limit-len(out))]...)
		i += lit
		if i+2 > len(src) || len(out) >= limit {
			break
		}
		off := int(src[i]) | int(src[i+1])<<8
		i += 2
		m, ok := length(int(token & 15))
		if !ok || off == 0 || off > len(out) {
			break
		}
		m = min(m+4, limit-len(out))
		for range m { // byte by byte: a match may overlap its own output
			out = append(out, out[len(out)-off])
		}
	}
	return out
}
