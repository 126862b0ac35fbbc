package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/report/redact"
	"github.com/gpu-preflight/gpu-preflight/report/termsafe"
)

// MaxLineBytes bounds every JSON log line except the provenance line,
// newline included. Container runtimes split longer lines (CRI-O/conmon at
// 8 KiB, containerd and Docker at 16 KiB; docs/sources.md, "Log pipelines"), and
// a split JSON object is lost to the log pipeline.
const MaxLineBytes = 8000

// maxFieldBytes bounds one finding's message or remedy in a log line, so
// that a line with both stays under MaxLineBytes without the last-resort
// shrinking in lineCap.
const maxFieldBytes = 3000

// Log formats.
const (
	FormatJSON    = "json"
	FormatConsole = "console"
	FormatAuto    = "auto"
)

// NewLogger returns the logger gpu-preflight writes to w (stderr: stdout
// belongs to the training program).
//
// format "json" writes one compact JSON object per line with the keys time
// (RFC 3339, UTC, nanoseconds), level and message, then the fields; no line
// is longer than MaxLineBytes except the provenance line (see LogRecord).
// "console" is zerolog's human format, coloured only when UseColor(w). "auto"
// (or "") is console when w is a terminal, else json. level is a zerolog
// level name ("" is info).
func NewLogger(w io.Writer, format, level string) (zerolog.Logger, error) {
	lvl := zerolog.InfoLevel
	if level != "" {
		l, err := zerolog.ParseLevel(strings.ToLower(level))
		if err != nil || l == zerolog.NoLevel {
			return zerolog.Nop(), fmt.Errorf("log level %q: want one of trace, debug, info, warn, error, fatal, panic, disabled", level)
		}
		lvl = l
	}
	tty := IsTerminal(w)
	switch format {
	case FormatAuto, "":
		if tty {
			format = FormatConsole
		} else {
			format = FormatJSON
		}
	case FormatJSON, FormatConsole:
	default:
		return zerolog.Nop(), fmt.Errorf("log format %q: want json, console or auto", format)
	}
	var out io.Writer
	if format == FormatConsole {
		out = &lineCap{w: zerolog.ConsoleWriter{Out: w, NoColor: !UseColor(w), TimeFormat: "15:04:05.000", FormatPrepare: consoleFields}, console: true}
	} else {
		out = &lineCap{w: w, limit: true}
	}
	return zerolog.New(out).Level(lvl).Hook(timeHook{}), nil
}

// consoleFields drops, in console format, the fields a person need not
// read twice: the summary's and the abort line's (their sentence says it
// all) and a finding's status (the level says it).
func consoleFields(evt map[string]any) error {
	switch evt["event"] {
	case EventSummary, EventAbort:
		for k := range evt {
			switch k {
			case zerolog.TimestampFieldName, zerolog.LevelFieldName, zerolog.MessageFieldName:
			default:
				delete(evt, k)
			}
		}
	}
	if _, ok := evt["check"]; ok {
		delete(evt, "status")
	}
	return nil
}

// timeHook adds the time in TimeLayout. zerolog's own Timestamp uses the
// package-global TimeFieldFormat (whole seconds by default); a hook keeps
// the format local to this logger.
type timeHook struct{}

func (timeHook) Run(e *zerolog.Event, _ zerolog.Level, _ string) {
	e.Str(zerolog.TimestampFieldName, time.Now().UTC().Format(TimeLayout))
}

// IsTerminal reports whether w is a file open on a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// LogFindings logs one line per finding: level by status (info at info,
// pass and skip at debug: a passing run stays quiet, and the record keeps
// every check), message the finding's message, fields check, status and
// remedy, and nodeFault when set. Text is redacted and long values are cut
// (the line says so).
func LogFindings(l zerolog.Logger, findings []check.Finding) {
	for _, f := range findings {
		var e *zerolog.Event
		switch f.Status {
		case check.Error:
			e = l.Error()
		case check.Warn:
			e = l.Warn()
		case check.Info:
			e = l.Info()
		default:
			e = l.Debug()
		}
		if !e.Enabled() {
			continue
		}
		if f.NodeFault {
			e = e.Bool("nodeFault", true)
		}
		msg, cutMsg := Truncate(redact.Value(f.Message), maxFieldBytes)
		remedy, cutRemedy := Truncate(redact.Value(f.Remedy), maxFieldBytes)
		e = e.Str("check", f.ID).Str("status", string(f.Status)).Str("remedy", remedy)
		if cutMsg || cutRemedy {
			e = e.Bool("truncated", true)
		}
		e.Msg(msg)
	}
}

// ProvenanceMessage is the message of the log line that carries the record.
const ProvenanceMessage = "provenance"

// LogRecord logs the whole record as one line, message "provenance", the
// record under "record" and its size in bytes under "recordBytes". It is
// the one line allowed to exceed MaxLineBytes: a pipeline gets the record
// without a volume, and the size tells a reader whether a runtime split it.
func LogRecord(l zerolog.Logger, r Record) error {
	e := l.Info()
	if !e.Enabled() {
		return nil // a level above info: skip the encoding on the start-up path
	}
	b, err := EncodeCompact(r)
	if err != nil {
		return fmt.Errorf("%w (for the log)", err)
	}
	e.Int("recordBytes", len(b)).RawJSON("record", b).Msg(ProvenanceMessage)
	return nil
}

// Truncate cuts s to at most limit bytes at a rune boundary, ending it with a
// note of how much was cut, and reports whether it cut.
func Truncate(s string, limit int) (string, bool) {
	if len(s) <= limit {
		return s, false
	}
	note := fmt.Sprintf("…[truncated %d bytes]", len(s))
	keep := limit - len(note)
	if keep < 0 {
		keep = 0
	}
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + note, true
}

// lineCap passes zerolog's lines to w after redacting every value (a
// second line of defence: values logged by any package go through
// redact.Value, and a field whose name looks like a credential is replaced
// whole), and, with limit, shrinking any line longer than MaxLineBytes
// other than the provenance line: the largest field values are cut until it
// fits, and a "truncatedFields" field lists the keys cut or dropped.
// zerolog hands a writer one whole line per Write.
type lineCap struct {
	w     io.Writer
	limit bool
	// console: the line goes to zerolog's ConsoleWriter, which prints
	// string values raw; they are escaped for the terminal first
	// (termsafe). JSON lines need nothing: JSON escapes control characters.
	console bool
}

func (c *lineCap) Write(p []byte) (int, error) {
	line := fitLine(p, c.limit)
	if c.console {
		line = consoleSafe(line)
	}
	if _, err := c.w.Write(line); err != nil {
		return 0, err
	}
	return len(p), nil
}

// consoleSafe escapes, for the terminal, every top-level string value of a
// JSON log line, which ConsoleWriter would print raw; nested objects and
// arrays it prints as JSON, escaped already.
func consoleSafe(line []byte) []byte {
	fields, err := decodeObject(line)
	if err != nil {
		return []byte(termsafe.String(string(line)))
	}
	changed := false
	for i, f := range fields {
		if len(f.raw) == 0 || f.raw[0] != '"' {
			continue
		}
		var s string
		if json.Unmarshal(f.raw, &s) != nil {
			continue
		}
		if safe := termsafe.String(s); safe != s {
			fields[i].raw, _ = marshalNoEscape(safe)
			changed = true
		}
	}
	if !changed {
		return line
	}
	return encodeFields(fields, nil)
}

type field struct {
	key string
	raw json.RawMessage
}

// fitLine puts time, level and message first (zerolog writes level first
// and the hook's time last), redacts the values, and with limit cuts the
// line to MaxLineBytes unless it is the provenance line (whose record was
// redacted when it was built).
func fitLine(p []byte, limit bool) []byte {
	fields, err := decodeObject(p)
	if err != nil {
		// zerolog writes valid JSON; this is a last resort.
		text := redact.Value(string(bytes.TrimSpace(p)))
		if !limit || len(text) < MaxLineBytes {
			return []byte(text + "\n")
		}
		s, _ := Truncate(text, MaxLineBytes/2)
		b, _ := marshalNoEscape(s)
		return []byte(`{"level":"error","message":"unparsable log line truncated","line":` + string(b) + "}\n")
	}
	fields, nEssential := essentialsFirst(fields)
	provenance, hasSize := false, false
	for _, f := range fields {
		switch f.key {
		case zerolog.MessageFieldName:
			provenance = string(f.raw) == `"`+ProvenanceMessage+`"`
		case "recordBytes":
			hasSize = true
		}
	}
	if provenance && hasSize {
		return encodeFields(fields, nil)
	}
	for i := range fields {
		fields[i].raw = redactRaw(fields[i].key, fields[i].raw)
	}
	if !limit || encodedSize(fields) <= MaxLineBytes {
		return encodeFields(fields, nil)
	}
	return encodeFields(shrink(fields, nEssential))
}

// redactRaw redacts one JSON value logged under key.
func redactRaw(key string, raw json.RawMessage) json.RawMessage {
	if key == zerolog.TimestampFieldName || key == zerolog.LevelFieldName || len(raw) == 0 {
		return raw
	}
	if redact.Sensitive(key) {
		return json.RawMessage(`"` + redact.Placeholder + `"`)
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return raw
		}
		if r := redact.Value(s); r != s {
			b, _ := marshalNoEscape(r)
			return b
		}
	case '{', '[':
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return raw
		}
		if v, changed := redactAny(v); changed {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if enc.Encode(v) == nil {
				return bytes.TrimRight(b.Bytes(), "\n")
			}
		}
	}
	return raw
}

func allStrings(list []any) ([]string, bool) {
	out := make([]string, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, false
		}
		out[i] = s
	}
	return out, true
}

// redactAny redacts the strings in a decoded JSON value, and the values of
// keys that look like credentials.
func redactAny(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		r := redact.Value(x)
		return r, r != x
	case map[string]any:
		changed := false
		for k, e := range x {
			if redact.Sensitive(k) {
				if e != redact.Placeholder {
					x[k], changed = redact.Placeholder, true
				}
				continue
			}
			if r, c := redactAny(e); c {
				x[k], changed = r, true
			}
		}
		return x, changed
	case []any:
		// A list of strings may be an argv: "--password", "x".
		if strs, ok := allStrings(x); ok {
			red := redact.Argv(strs)
			changed := false
			for i := range red {
				if red[i] != strs[i] {
					x[i], changed = red[i], true
				}
			}
			return x, changed
		}
		changed := false
		for i, e := range x {
			if r, c := redactAny(e); c {
				x[i], changed = r, true
			}
		}
		return x, changed
	}
	return v, false
}

// essentialsFirst orders the first time, level and message before the
// other fields, keeping the others' order, and returns how many it put
// first. A repeated key (a caller logging "message" as a field) is an
// ordinary field.
func essentialsFirst(fields []field) ([]field, int) {
	out := make([]field, 0, len(fields))
	first := make(map[int]bool)
	for _, key := range []string{zerolog.TimestampFieldName, zerolog.LevelFieldName, zerolog.MessageFieldName} {
		for i, f := range fields {
			if f.key == key {
				out = append(out, f)
				first[i] = true
				break
			}
		}
	}
	n := len(out)
	for i, f := range fields {
		if !first[i] {
			out = append(out, f)
		}
	}
	return out, n
}

// shrink cuts the largest values, then drops trailing fields, until the
// line fits; it returns the fields and the keys it cut or dropped. The
// first nEssential fields (time, level, message) are cut but never dropped.
func shrink(fields []field, nEssential int) ([]field, []string) {
	var cut []string
	const overhead = 200 // the "truncatedFields" field and the notes
	done := make(map[int]bool)
	for size := encodedSize(fields); size+overhead > MaxLineBytes; {
		i := largest(fields, done)
		if i < 0 || len(fields[i].raw) <= 80 {
			break
		}
		old := len(fields[i].raw)
		var s string
		if err := json.Unmarshal(fields[i].raw, &s); err != nil {
			s = string(fields[i].raw) // an object or array becomes its text, cut
		}
		// Escaping makes the encoded value longer than s; scale the cut.
		excess := size + overhead - MaxLineBytes
		want := len(s) - excess*len(s)/old - 1
		if want < 64 {
			want = 64
		}
		s, _ = Truncate(s, want)
		b, _ := marshalNoEscape(s)
		if len(b) >= old {
			done[i] = true // cannot get shorter this way
			continue
		}
		fields[i].raw = b
		size += len(b) - old
		cut = appendOnce(cut, fields[i].key)
	}
	// Many small fields: drop them from the end, keeping time, level and
	// message.
	size := encodedSize(fields)
	for size+cutSize(cut) > MaxLineBytes {
		i := len(fields) - 1
		if i < nEssential {
			break
		}
		k, _ := json.Marshal(fields[i].key)
		size -= len(k) + 2 + len(fields[i].raw)
		cut = appendOnce(cut, fields[i].key)
		fields = append(fields[:i], fields[i+1:]...)
	}
	return fields, cut
}

// encodeFields writes fields as one JSON object line, with a
// "truncatedFields" list when cut is not empty.
func encodeFields(fields []field, cut []string) []byte {
	if len(cut) > 0 {
		b, _ := json.Marshal(capList(cut))
		fields = append(fields, field{key: "truncatedFields", raw: b})
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			out.WriteByte(',')
		}
		k, _ := json.Marshal(f.key)
		out.Write(k)
		out.WriteByte(':')
		out.Write(f.raw)
	}
	out.WriteString("}\n")
	return out.Bytes()
}

// maxListed bounds the keys named in "truncatedFields".
const maxListed = 20

// capList names at most maxListed keys, then how many more there were.
func capList(cut []string) []string {
	if len(cut) <= maxListed {
		return cut
	}
	return append(cut[:maxListed:maxListed], fmt.Sprintf("and %d more", len(cut)-maxListed))
}

func appendOnce(list []string, s string) []string {
	s, _ = Truncate(s, 64)
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// cutSize is what the "truncatedFields" field adds for these keys (with
// room for one more).
func cutSize(cut []string) int {
	b, _ := json.Marshal(capList(cut))
	return len(`,"truncatedFields":`) + len(b) + 64
}

// encodedSize is the length of the line fields encode to.
func encodedSize(fields []field) int {
	n := 3 // "{", "}", "\n"
	for i, f := range fields {
		if i > 0 {
			n++
		}
		k, _ := json.Marshal(f.key)
		n += len(k) + 1 + len(f.raw)
	}
	return n
}

// largest returns the index of the biggest value not in done, or -1.
func largest(fields []field, done map[int]bool) int {
	best := -1
	for i, f := range fields {
		if done[i] || f.key == "truncatedFields" {
			continue
		}
		if best < 0 || len(f.raw) > len(fields[best].raw) {
			best = i
		}
	}
	return best
}

// decodeObject splits a JSON object into its keys and raw values, in order.
func decodeObject(p []byte) ([]field, error) {
	// zerolog writes valid JSON; json.Valid proves it without building
	// anything, and the split below then only has to find where each
	// top-level value ends. (json.Decoder's tokens cost a tenth of a
	// millisecond per start-up for the dozen lines the shim logs.)
	if !json.Valid(p) {
		return nil, fmt.Errorf("not valid JSON")
	}
	p = bytes.TrimSpace(p)
	if len(p) < 2 || p[0] != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	var fields []field
	i := skipSpace(p, 1)
	for p[i] != '}' {
		end := valueEnd(p, i)
		rawKey := p[i:end]
		key := string(rawKey[1 : len(rawKey)-1])
		if !plainKey(rawKey) {
			if err := json.Unmarshal(rawKey, &key); err != nil {
				return nil, err
			}
		}
		i = skipSpace(p, skipSpace(p, end)+1) // past the colon
		end = valueEnd(p, i)
		fields = append(fields, field{key: key, raw: json.RawMessage(p[i:end])})
		i = skipSpace(p, end)
		if p[i] == ',' {
			i = skipSpace(p, i+1)
		}
	}
	return fields, nil
}

// plainKey reports whether a quoted key is printable ASCII without
// escapes, so that its text is its value.
func plainKey(raw []byte) bool {
	for _, c := range raw {
		if c == '\\' || c < 0x20 || c >= 0x80 {
			return false
		}
	}
	return true
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(p []byte, i int) int {
	for i < len(p) && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r') {
		i++
	}
	return i
}

// valueEnd returns the index just past the JSON value that starts at i in
// p, which must be valid JSON.
func valueEnd(p []byte, i int) int {
	depth := 0
	for ; i < len(p); i++ {
		switch p[i] {
		case '"':
			for i++; p[i] != '"'; i++ {
				if p[i] == '\\' {
					i++
				}
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // the end of an enclosing scalar's container
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\n', '\r', ':':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}

func marshalNoEscape(s string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
