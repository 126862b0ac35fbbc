package trace

import (
	"bytes"
	"time"

	"github.com/gpu-preflight/gpu-preflight/report/trace/jsonstream"
)

// maxPrefix bounds the bytes looked at for a line's prefix.
const maxPrefix = 256

// prefix is what a writer put before a log line; stream and part are
// the CRI format's.
type prefix struct {
	n       int
	kind    string // the writer, named in the source's form
	cri     bool
	stream  string
	partial bool
}

// prefixOf reads the prefixes writers put before a log line, in the order
// they stack: kubectl logs --prefix's "[pod/NAME/CONTAINER] ", then the
// CRI format's "TIME STREAM TAG " or kubectl --timestamps' "TIME ";
// Fluentd's "TIME<TAB>TAG<TAB>"; Fluent Bit's "TAG: " before [TIME, RECORD].
// None starts as JSON does.
func prefixOf(p []byte) prefix {
	var pre prefix
	if len(p) > 0 && (p[0] == '{' || p[0] == '"') {
		return pre
	}
	if bytes.HasPrefix(p, []byte("[")) {
		if i := bytes.Index(p, []byte("] ")); i > 0 && bytes.Count(p[:i], []byte("/")) >= 2 && bytes.IndexByte(p[:i], ' ') < 0 {
			pre.n, pre.kind = i+2, "kubectl --prefix"
		}
	}
	rest := p[pre.n:]
	if sp := bytes.IndexByte(rest, ' '); sp > 0 && isTime(rest[:sp]) {
		pre.n += sp + 1
		rest = rest[sp+1:]
		if pre.kind == "" {
			pre.kind = "kubectl --timestamps"
		}
		for _, s := range []string{Stdout, Stderr} {
			if len(rest) >= len(s)+2 && string(rest[:len(s)]) == s && rest[len(s)] == ' ' {
				tag := rest[len(s)+1:]
				end := bytes.IndexByte(tag, ' ')
				if end < 0 {
					end = len(tag)
				}
				if t := tag[:end]; len(t) > 0 && (t[0] == 'P' || t[0] == 'F') {
					pre.cri, pre.stream, pre.partial, pre.kind = true, s, t[0] == 'P', "CRI"
					pre.n += len(s) + 1 + min(end+1, len(tag))
				}
			}
		}
		return pre
	}
	if pre.n > 0 {
		return pre
	}
	if tab := bytes.IndexByte(p, '\t'); tab > 0 && isTime(p[:tab]) {
		if tab2 := bytes.IndexByte(p[tab+1:], '\t'); tab2 >= 0 {
			return prefix{n: tab + 1 + tab2 + 1, kind: "Fluentd out_file"}
		}
	}
	if i := bytes.Index(p, []byte(": [")); i > 0 && isTag(p[:i]) {
		return prefix{n: i + 2, kind: "Fluent Bit out_file"}
	}
	return pre
}

// isTime reports whether b is RFC 3339 or Fluentd's %Y-%m-%dT%H:%M:%S%z.
func isTime(b []byte) bool {
	if len(b) < 20 || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' {
		return false
	}
	for _, i := range []int{0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18} {
		if b[i] < '0' || b[i] > '9' {
			return false
		}
	}
	switch z := b[len(b)-1]; {
	case z == 'Z':
		return true
	case z >= '0' && z <= '9':
		_, err := time.Parse("2006-01-02T15:04:05.999999999-0700", string(b))
		if err != nil {
			_, err = time.Parse(time.RFC3339Nano, string(b))
		}
		return err == nil
	}
	return false
}

// isTag reports whether b is a Fluent Bit tag (kube.var.log.containers.x).
func isTag(b []byte) bool {
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return len(b) > 0
}

// criPart keeps a part (tag P) until the last (F) comes, then reads the
// line whole; false leaves a whole line to read in place.
func (rd *reader) criPart(d *jsonstream.Decoder, pre prefix) bool {
	held, ok := rd.partials[pre.stream]
	if !pre.partial && !ok {
		return false
	}
	line, over := d.ReadLine(held, MaxMessageBytes)
	rd.partials[pre.stream] = line
	if over || !rd.account(len(line)-len(held)) {
		rd.drop(pre.stream, "longer than trace joins (512 KiB, 2 MiB for all sources together)")
		return true
	}
	if !pre.partial {
		rd.release(pre.stream)
		rd.message(line)
	}
	return true
}

// hold keeps part of a line under key (a container and its stream); the
// last part reads the line whole.
func (rd *reader) hold(key string, part []byte, last bool) {
	held, ok := rd.partials[key]
	if last && !ok {
		rd.message(part)
		return
	}
	rd.partials[key] = append(held, part...)
	if len(held)+len(part) > MaxMessageBytes || !rd.account(len(part)) {
		rd.drop(key, "longer than trace joins (512 KiB, 2 MiB for all sources together)")
		return
	}
	if last {
		line := rd.partials[key]
		rd.release(key)
		rd.message(line)
	}
}

// account reports whether n more bytes held keep all readers within
// maxPartials.
func (rd *reader) account(n int) bool {
	return rd.held.Add(int64(n)) <= maxPartials
}

// release lets go of the line held under key.
func (rd *reader) release(key string) {
	rd.held.Add(-int64(len(rd.partials[key])))
	delete(rd.partials, key)
}

// drop counts the line held under key as truncated if it could be a record.
func (rd *reader) drop(key, why string) {
	held := rd.partials[key]
	rd.release(key)
	if recordish(held) {
		rd.counts.Truncated++
		rd.report(ProblemTruncated, "a provenance line "+why)
	} else {
		rd.counts.Skipped++
	}
}

// flushPartials counts the lines whose last part never came.
func (rd *reader) flushPartials() {
	for key := range rd.partials {
		rd.drop(key, "whose last part is missing (the writer split it, and the stream ended first)")
	}
}
