// Package provline reduces a provenance record to what `gpu-preflight
// trace` compares: the record's own field names and shape, every value cut
// to a cap and every list kept within a byte budget, so that the whole
// fits one log line any pipeline keeps (MaxLineBytes). The log's
// provenance line carries it; trace reduces every record it reads the
// same way, so a ledger and a log stream give the same answers. Reducing
// a reduced record changes nothing.
package provline

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"unicode/utf8"

	"github.com/gpu-preflight/gpu-preflight/report/trace/jsonstream"
)

// Run is a record reduced.
type Run struct {
	SchemaVersion string
	RunID         string
	StartedAt     string
	Tool          string
	Host          Host
	Image         Image
	Checks        []Check
	Decision      Decision
	Command       Command
	Orchestrator  Orchestrator
	// Env holds the variables that tune CUDA, NCCL and the frameworks
	// (diff.Tuning), sorted by name.
	Env     []Var
	Outcome *Outcome
}

// Host is host: the driver, the GPUs as runs of equal ones, the CUDA
// smoke test's verdict.
type Host struct {
	Hostname string
	Driver   Driver
	GPUs     []GPU
	CUDA     CUDA
}

// Driver is host.driver.
type Driver struct {
	Version, CUDAVersion string
	OpenKernelModule     bool
	Branch               string
}

// GPU is Count GPUs in a row that agree in every field kept.
type GPU struct {
	Name, Brand, ComputeCapability, MIGMode, PersistenceMode string
	Count                                                    int
}

// CUDA is host.cuda's verdict.
type CUDA struct {
	Mode, Outcome    string
	DriverAPIVersion int
}

// Image is image.
type Image struct {
	CUDAVersion, CUDAVersionFull string
	Requirements                 []Var
	RequireDisabled              bool
	CuDNNVersion, NCCLVersion    string
	TensorRTVersion              string
	Compat                       []string
	Frameworks                   []Framework
	Ref, Digest, Revision        string
}

// Framework is one of image.frameworks.
type Framework struct {
	Name, Version, CUDAVersion, CuDNNVersion, Build string
	Archs                                           []string
}

// Check is one check's verdict.
type Check struct{ ID, Status string }

// Decision is decision.
type Decision struct {
	Policy, Action string
	ExitCode       int
	NodeFault      bool
	Blocking       []string
}

// Command is what the record keeps of the command: the program (argv's
// first element), argv's digest, how argv was recorded and how many
// elements it left out. A record of no command (`check`) has none of them.
type Command struct {
	Program                string
	ArgvSHA256, ArgvRecord string
	ArgvDropped            int
}

// Orchestrator is what places the run: its job, rank and node.
type Orchestrator struct {
	JobID, JobIDSource                           string
	Namespace, PodName, NodeName, CompletionIdx  string
	SlurmNodeName, SlurmProcID                   string
	TorchrunRank, PaddleTrainerID, KubeflowJobID string
}

// Var is a name and a value (an environment variable, a requirement).
type Var struct{ Name, Value string }

// Outcome is how the command ended.
type Outcome struct {
	ExitCode, Signal int
	NotStarted       string
}

// Finished is the log line that ends a supervised run: its run id, the
// line's time and how the command ended.
type Finished struct {
	RunID, Time string
	Outcome     Outcome
}

// MaxLineBytes bounds the provenance log line, its newline left out.
// journalctl -o json prints a field of 4096 bytes or more, name and "="
// included, as null unless --all is given (systemd's logs-show.c,
// JSON_THRESHOLD): "MESSAGE=" and the line must stay under it.
const MaxLineBytes = 4096 - len("MESSAGE=") - 1

// MaxRecordBytes bounds a reduced record's JSON, AppendJSON's output;
// the line's envelope takes the rest of MaxLineBytes.
const MaxRecordBytes = 3760

// Caps on values, in encoded bytes (quotes left out). A record that does
// not fit MaxRecordBytes under them is reduced again under capTight and
// half the budgets, which fit by construction; the fields that name the
// run and its image keep their caps.
const (
	capShort   = 16
	capTool    = 24
	capSHA     = 64
	capVersion = 40
	capName    = 64
	capRef     = 128
	capDigest  = 72
	capText    = 128
	capTight   = 24
)

// MaxTextBytes is the longest value kept, in encoded bytes: a string read
// for a Builder need not be longer.
const MaxTextBytes = capRef

// Budgets of lists, in encoded bytes with their brackets.
const (
	budgetGPUs         = 520
	budgetRequirements = 240
	budgetCompat       = 100
	budgetFrameworks   = 480
	budgetArchs        = 120
	budgetChecks       = 540
	budgetBlocking     = 160
	budgetEnv          = 240
)

// maxHeld bounds the elements a list holds while a record is read; the
// rest are folded into its marker at once.
const maxHeld = 64

// Cap cuts s to encoded bytes: a value over it keeps its start, then
// "…" and 8 hex digits of the SHA-256 of the whole (sum, when s is a
// prefix of it), so two long values stay apart.
func Cap(s []byte, more bool, sum [sha256.Size]byte, limit int) string {
	if !more && encodedLen(s) <= limit {
		return string(s)
	}
	if !more {
		sum = sha256.Sum256(s)
	}
	const tail = len("…") + 8
	n, i := 0, 0
	for i < len(s) {
		r, w := utf8.DecodeRune(s[i:])
		if n+runeEncodedLen(r, w) > limit-tail {
			break
		}
		n += runeEncodedLen(r, w)
		i += w
	}
	return string(s[:i]) + "…" + hex.EncodeToString(sum[:4])
}

// marker stands for the elements a list had no room for: how many, and
// 8 hex digits of a digest of them.
func marker(n int, sum []byte) string {
	return "(" + strconv.Itoa(n) + " more, " + hex.EncodeToString(sum[:4]) + ")"
}

// Project reduces the record encoded in b (a whole record, or one Project
// made). ok is false when b is no JSON object with a schemaVersion.
func Project(b []byte) (Run, bool) {
	var bl Builder
	d := jsonstream.NewBytesDecoder(b)
	if k, err := d.Next(); err != nil || k != jsonstream.ObjectStart {
		return Run{}, false
	}
	if bl.ReadObject(d) != nil {
		return Run{}, false
	}
	return bl.Run()
}

// Feed hands b the token k that d just read; b reads a string's text from
// d when it wants it.
func (b *Builder) Feed(d *jsonstream.Decoder, k jsonstream.Kind) error {
	switch k {
	case jsonstream.ObjectStart, jsonstream.ArrayStart:
		b.Start(k == jsonstream.ArrayStart)
	case jsonstream.ObjectEnd, jsonstream.ArrayEnd:
		b.End()
	case jsonstream.Key:
		t, _, err := d.Text(maxKey)
		if err != nil {
			return err
		}
		b.Key(t)
	case jsonstream.String:
		if !b.Wants() {
			b.Skip()
			return nil
		}
		t, more, sum, err := d.TextSum(capRef)
		if err != nil {
			return err
		}
		b.String(t, more, sum)
	case jsonstream.Number:
		b.Number(d.Raw())
	case jsonstream.True, jsonstream.False:
		b.Bool(k == jsonstream.True)
	default:
		b.Skip()
	}
	return nil
}

// maxKey bounds the member names read: longer ones are no record field.
const maxKey = 64

func encodedLen(s []byte) int {
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] < utf8.RuneSelf && s[i] != '"' && s[i] != '\\' {
		i++
	}
	n := i
	for i < len(s) {
		r, w := utf8.DecodeRune(s[i:])
		n += runeEncodedLen(r, w)
		i += w
	}
	return n
}

func runeEncodedLen(r rune, w int) int {
	switch {
	case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t':
		return 2
	case r < 0x20:
		return 6
	case r == utf8.RuneError && w == 1:
		return 3
	}
	return w
}

// appendString appends s as a JSON string: control characters escaped,
// invalid UTF-8 as U+FFFD, everything else as is.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] < utf8.RuneSelf && s[i] != '"' && s[i] != '\\' {
		i++
	}
	b = append(b, s[:i]...)
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r == '\t':
			b = append(b, '\\', 't')
		case r < 0x20:
			b = append(b, `\u00`...)
			b = append(b, "0123456789abcdef"[r>>4], "0123456789abcdef"[r&15])
		case r == utf8.RuneError && w == 1:
			b = append(b, "\uFFFD"...)
		default:
			b = append(b, s[i:i+w]...)
		}
		i += w
	}
	return append(b, '"')
}

// NotJob reports whether the record is of no job run: it names no command
// at all (`gpu-preflight check`), so it says nothing about a job.
func (r *Run) NotJob() bool {
	c := r.Command
	return c.Program == "" && c.ArgvSHA256 == "" && c.ArgvDropped == 0
}
