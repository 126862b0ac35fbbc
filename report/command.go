package report

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/gpu-preflight/gpu-preflight/report/redact"
)

// Command is what gpu-preflight was asked to run.
type Command struct {
	// Argv is the command as ArgvRecord says, at most MaxRecordArgs
	// elements and maxRecordArgvBytes, each cut like an environment value.
	Argv []string `json:"argv"`
	// ArgvSHA256 is ArgvDigest of the command as given, so two runs of one
	// command compare whatever the record keeps of it; empty under ArgvNone.
	ArgvSHA256  string `json:"argvSha256"`
	ArgvRecord  string `json:"argvRecord"`  // PREFLIGHT_RECORD_ARGV, one of ArgvModes
	ArgvDropped int    `json:"argvDropped"` // elements left out by the caps
	Supervised  bool   `json:"supervised"`  // a child of gpu-preflight: a record with no Outcome lacks its end
	Cwd         string `json:"cwd"`
	UID         int    `json:"uid"`
	GID         int    `json:"gid"`
}

// What a record keeps of the command's argv (PREFLIGHT_RECORD_ARGV).
const (
	// ArgvRedacted keeps argv with every credential report/redact knows
	// replaced: readable, though a credential in a form redact does not
	// know would be recorded.
	ArgvRedacted = "redacted"
	// ArgvDigestOnly keeps only the digest (a short password could still
	// be confirmed by guessing the whole command line).
	ArgvDigestOnly = "digest"
	ArgvNone       = "none"
	ArgvFull       = "full" // as given, for commands known to carry no credential
)

// ArgvModes are the values PREFLIGHT_RECORD_ARGV takes, the default first.
var ArgvModes = []string{ArgvRedacted, ArgvDigestOnly, ArgvNone, ArgvFull}

// MaxRecordArgs bounds the argv elements a record keeps: a training command
// has a few dozen, and ARG_MAX allows 2 MiB, which every record, ledger
// line and log line would carry.
const MaxRecordArgs = 1024

const maxRecordArgvBytes = 64 << 10

// ArgvDigest is the lower-case hex SHA-256 of argv with each element
// followed by a NUL byte, which no element holds, so ["a b"] and ["a", "b"]
// differ. Empty for a nil argv.
func ArgvDigest(argv []string) string {
	if argv == nil {
		return ""
	}
	h := sha256.New()
	for _, a := range argv {
		h.Write([]byte(a))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// newCommand records argv as mode says, redacting before it cuts (a cut
// could split a credential from the text that marks it).
func newCommand(argv []string, mode string) Command {
	c := Command{ArgvRecord: mode}
	if mode == "" {
		c.ArgvRecord = ArgvRedacted
	}
	if c.ArgvRecord != ArgvNone {
		c.ArgvSHA256 = ArgvDigest(argv)
	}
	var kept []string
	switch c.ArgvRecord {
	case ArgvRedacted:
		kept = redact.Argv(argv[:min(len(argv), MaxRecordArgs)])
	case ArgvFull:
		kept = argv[:min(len(argv), MaxRecordArgs)]
	default:
		c.ArgvDropped = len(argv)
		return c
	}
	budget := maxRecordArgvBytes
	for _, a := range kept {
		a = capValue(a)
		if len(a) > budget {
			break
		}
		budget -= len(a)
		c.Argv = append(c.Argv, a)
	}
	c.ArgvDropped = len(argv) - len(c.Argv)
	return c
}
