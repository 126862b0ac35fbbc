// Package provline reduces a provenance record to what `gpu-preflight
// trace` compares, in the record's own shape, values capped and lists
// within budgets, so it fits one log line any pipeline keeps. trace
// reduces every record it reads the same way, so a ledger and a log give
// the same answers.
package provline

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"unicode/utf8"

	"github.com/gpu-preflight/gpu-preflight/report/trace/jsonstream"
)

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
	Env           []Var // diff.Tuning's variables, sorted by name
	Outcome       *Outcome
}

type Host struct {
	Hostname  string
	Driver    Driver
	GPUs      []GPU
	CUDA      CUDA
	Transport Transport
}

// Transport is the network NCCL was predicted to use; Devices are the
// prediction's devices, sorted and joined by spaces: ranks that disagree
// on them hang.
type Transport struct {
	Network, LinkLayer, Devices string
}

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

type CUDA struct {
	Mode, Outcome    string
	DriverAPIVersion int
}

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

type Framework struct {
	Name, Version, CUDAVersion, CuDNNVersion, Build string
	Archs                                           []string
}

type Check struct{ ID, Status string }

type Decision struct {
	Policy, Action string
	ExitCode       int
	NodeFault      bool
	Blocking       []string
}

// Command has none of its fields in a record of no command (`check`).
type Command struct {
	Program                string
	ArgvSHA256, ArgvRecord string
	ArgvDropped            int
	Supervised             bool
}

type Orchestrator struct {
	JobID, JobIDSource                           string
	Namespace, PodName, NodeName, CompletionIdx  string
	SlurmNodeName, SlurmProcID                   string
	TorchrunRank, PaddleTrainerID, KubeflowJobID string
}

type Var struct{ Name, Value string }

type Outcome struct {
	ExitCode, Signal int
	NotStarted       string
}

// Finished is the log line that ends a supervised run.
type Finished struct {
	RunID, Time string
	Outcome     Outcome
}

// MaxLineBytes bounds the provenance log line, its newline left out.
// journalctl -o json prints a field of 4096 bytes or more, name and "="
// included, as null unless --all is given (systemd's logs-show.c,
// JSON_THRESHOLD): "MESSAGE=" and the line must stay under it.
const MaxLineBytes = 4096 - len("MESSAGE=") - 1

// MaxRecordBytes bounds AppendJSON's output; the line's envelope takes
// the rest of MaxLineBytes.
const MaxRecordBytes = 3760

// Caps on values, in encoded bytes. A record that does not fit is reduced
// again under capTight and half the budgets, which fit by construction.
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

// MaxTextBytes is the longest value kept, in encoded bytes.
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

// maxHeld bounds a list's elements held while reading; the rest go into
// its marker.
const maxHeld = 64

// Cap cuts s to limit encoded bytes, ending in "…" and 8 hex digits of
// the whole's SHA-256 (sum, when s is its prefix), so long values stay apart.
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

// marker stands for the elements a list had no room for.
func marker(n int, sum []byte) string {
	return "(" + strconv.Itoa(n) + " more, " + hex.EncodeToString(sum[:4]) + ")"
}

// Project reduces the record encoded in b; ok is false when b is no JSON
// object with a schemaVersion.
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

// appendString appends s as a JSON string, invalid UTF-8 as U+FFFD.
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

// NotJob reports whether the record names no command (`check`).
func (r *Run) NotJob() bool {
	c := r.Command
	return c.Program == "" && c.ArgvSHA256 == "" && c.ArgvDropped == 0
}
