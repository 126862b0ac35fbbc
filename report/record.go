// Package report is the model of what one run leaves behind: the
// provenance record (docs/schema/README.md) built from the run's facts,
// findings and decision, and the text made from it: the summary sentence,
// the abort reason, the Kubernetes termination message and the human
// report of `gpu-preflight check`.
//
// Its sub-packages do the writing: store puts the record and the
// termination message on disk, ledger appends the record to a JSON-lines
// file, logs writes the log lines.
//
// Secrets are removed when the record is built (New), so no unredacted
// value is ever held in a Record; every output is produced from a Record or
// passes through package redact.
package report

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/internal/jsonenc"
	"github.com/gpu-preflight/gpu-preflight/internal/truncate"
	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/compat"
	"github.com/gpu-preflight/gpu-preflight/preflight/decision"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/imageref"
	"github.com/gpu-preflight/gpu-preflight/report/redact"
)

// The encoder is generated so that a start builds none by reflection.
//go:generate go run ../internal/cmd/jsongen -type Record -o record_json.go

// EncodedBytes is a capacity to encode a record into (AppendJSON) on the
// start-up path: a GPU-less start's record is about 4.5 KB, so one
// allocation holds it where growing from nothing would allocate about
// 16 KB on the way, and a start pays for every fresh page it touches.
const EncodedBytes = 8 << 10

// SchemaVersion is the record's schema version. It changes on an
// incompatible change (a field removed, renamed or retyped); adding a field
// is compatible. The schema is docs/schema/provenance.v<N>.schema.json.
const SchemaVersion = "1"

// TimeLayout is RFC 3339 in UTC with exactly nine fractional digits, so
// records and log lines sort as strings and nothing is lost.
const TimeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// Record is one run's provenance record. Field names are the JSON schema's
// (docs/schema/provenance.v1.schema.json); every field is always present,
// empty when unknown, except Outcome, which is null unless the run was
// supervised.
//
// Where a facts value has the record's shape (facts.Requirement,
// facts.CompatLib) or the decision is recorded as policy made it
// (decision.Decision), the record holds that type. The record's own types
// below stand where the schema's shape differs from the facts type's, each
// saying how. The usual difference: facts types are also the probes' and
// the image manifest's JSON, where an unknown value is left out
// (omitempty); the record writes every field, so a consumer never has to
// tell "unknown" from "absent".
type Record struct {
	SchemaVersion string             `json:"schemaVersion"`
	RunID         string             `json:"runId"`
	StartedAt     string             `json:"startedAt"`
	Tool          Tool               `json:"tool"`
	Host          Host               `json:"host"`
	Image         Image              `json:"image"`
	Checks        []Check            `json:"checks"`
	Decision      decision.Decision  `json:"decision"`
	Command       Command            `json:"command"`
	Orchestrator  facts.Orchestrator `json:"orchestrator"`
	Env           map[string]string  `json:"env"`
	// EnvDropped counts the allow-listed variables left out of Env beyond
	// its first MaxRecordEnv names: normally 0.
	EnvDropped int      `json:"envDropped"`
	Outcome    *Outcome `json:"outcome"`
}

// AppendJSON appends r as JSON; on a NaN or infinity it fails, naming the
// field, and returns dst as it was. A nil r is null.
func (r *Record) AppendJSON(dst []byte) ([]byte, error) {
	if r == nil {
		return append(dst, "null"...), nil
	}
	var e jsonenc.Encoder
	b := r.AppendRecordJSON(&e, dst)
	if err := e.Err(); err != nil {
		return dst, err
	}
	return b, nil
}

// MarshalJSON is AppendJSON, so that encoding/json writes the record too.
func (r Record) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil) }

// Tool is the gpu-preflight build.
type Tool struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
}

// Host is the machine and its driver: facts.Host with every field present,
// the driver's lifecycle branch added, and the record's own GPU, NVML,
// Cgroup and CUDA types.
type Host struct {
	Hostname    string   `json:"hostname"`
	Kernel      string   `json:"kernel"`
	Driver      Driver   `json:"driver"`
	GPUs        []GPU    `json:"gpus"`
	DeviceNodes []string `json:"deviceNodes"`
	NVML        NVML     `json:"nvml"`
	ShmBytes    uint64   `json:"shmBytes"`
	Cgroup      Cgroup   `json:"cgroup"`
	CUDA        CUDA     `json:"cuda"`
}

// Driver is the NVIDIA kernel driver: facts.Driver with every field present
// (facts leave out an empty cudaVersionSource and a false
// openKernelModule) and the branch's lifecycle as of the run (Branch).
type Driver struct {
	Version           string       `json:"version"`
	CUDAVersion       string       `json:"cudaVersion"`
	Source            string       `json:"source"`
	CUDAVersionSource string       `json:"cudaVersionSource"`
	OpenKernelModule  bool         `json:"openKernelModule"`
	Branch            DriverBranch `json:"branch"`
}

// DriverBranch is the driver's branch in NVIDIA's data-center lifecycle
// (compat.Lifecycle), as of the run's start.
type DriverBranch struct {
	// Name is "R535"; empty without a driver.
	Name string `json:"name"`
	// Known is false when the lifecycle table does not hold the branch.
	Known bool `json:"known"`
	// Designation is "Long Term Support Branch", "Production Branch", "New
	// Feature Branch", or empty when unknown.
	Designation string `json:"designation"`
	// EndOfLife is "June 2026", "by August 2025", or empty when none was
	// published.
	EndOfLife string `json:"endOfLife"`
	// Supported is true for a Long Term Support or Production Branch
	// before its end of life on the day of the run.
	Supported bool `json:"supported"`
}

// GPU is one GPU the driver reports: facts.GPU with every field present,
// where facts leave out an empty architecture, the health counters NVML
// did not answer and an empty errors map; the record writes them as "",
// null and {}.
type GPU struct {
	Index                  int     `json:"index"`
	Name                   string  `json:"name"`
	UUID                   string  `json:"uuid"`
	PCIBusID               string  `json:"pciBusId"`
	Brand                  string  `json:"brand"`
	ComputeCapability      string  `json:"computeCapability"`
	Architecture           string  `json:"architecture"`
	MemoryBytes            uint64  `json:"memoryBytes"`
	MIGMode                string  `json:"migMode"`
	PersistenceMode        string  `json:"persistenceMode"`
	ECCUncorrectedVolatile *uint64 `json:"eccUncorrectedVolatile"`
	RetiredPagesPending    *bool   `json:"retiredPagesPending"`
	MIGDevices             *int    `json:"migDevices"`
	// Errors maps a field to the NVML error that left it empty.
	Errors map[string]string `json:"errors"`
}

// NVML is how the NVML probe went: facts.NVML with every field present and
// the error redacted, without Embedded (a fact about the gpu-preflight
// build, not about the run).
type NVML struct {
	Outcome        string  `json:"outcome"`
	Error          string  `json:"error"`
	Via            string  `json:"via"`
	Version        string  `json:"version"`
	DurationMillis float64 `json:"durationMillis"`
}

// Cgroup is the container's resource limits; 0 is unlimited or unknown.
// facts.Cgroup with every field present (facts leave out an unlimited
// memory or CPU limit).
type Cgroup struct {
	Version          int     `json:"version"`
	MemoryLimitBytes uint64  `json:"memoryLimitBytes"`
	CPULimit         float64 `json:"cpuLimit"`
}

// Image is what the image holds and which image it is: facts.Container
// flattened (the stack's versions, the identity merged with the
// environment's PREFLIGHT_IMAGE_*), without the raw environment (Record.Env
// holds the allow-listed part).
type Image struct {
	CUDAVersion     string `json:"cudaVersion"`
	CUDAVersionFull string `json:"cudaVersionFull"`
	// CUDASource is where the image's CUDA was read and CUDASourceKind
	// which kind of source won (facts.CUDASourceOrder); CUDASources are the
	// other sources found, whatever they say.
	CUDASource      string              `json:"cudaSource"`
	CUDASourceKind  string              `json:"cudaSourceKind"`
	CUDASources     []facts.CUDASource  `json:"cudaSources"`
	Requirements    []facts.Requirement `json:"requirements"`
	RequireDisabled bool                `json:"requireDisabled"`
	CuDNNVersion    string              `json:"cudnnVersion"`
	NCCLVersion     string              `json:"ncclVersion"`
	TensorRTVersion string              `json:"tensorrtVersion"`
	Compat          []facts.CompatLib   `json:"compat"`
	Frameworks      []Framework         `json:"frameworks"`
	// CUDALibraries are the CUDA libraries the frameworks load (cuda-stack).
	CUDALibraries  []CUDALibrary `json:"cudaLibraries"`
	Ref            string        `json:"ref"`
	Digest         string        `json:"digest"`
	Revision       string        `json:"revision"`
	Created        string        `json:"created"`
	Source         string        `json:"source"`
	IdentitySource string        `json:"identitySource"`
	// Pinned is true when the run's image is known by digest (in ref, or
	// PREFLIGHT_IMAGE_DIGEST), so the record names exactly one image.
	Pinned     bool   `json:"pinned"`
	ScanSource string `json:"scanSource"`
}

// Framework is one installed deep-learning framework: the part of
// facts.Framework a record keeps, every field present. The kernel
// libraries scanned, the package directory and the version's source file
// stay out: they are the scan's working data, and the checks' findings say
// what they showed.
type Framework struct {
	Name         string `json:"name"`
	Version      string `json:"version"`
	CUDAVersion  string `json:"cudaVersion"`
	CuDNNVersion string `json:"cudnnVersion"`
	// Build is cuda, cpu or rocm; empty when the files do not say.
	Build string   `json:"build"`
	Archs []string `json:"archs"`
	// Environment is the Python environment's prefix, EnvironmentKind its
	// kind, PathEntry the sys.path directory it is imported from and
	// PathFrom how that got on sys.path (facts.Framework).
	Environment     string `json:"environment"`
	EnvironmentKind string `json:"environmentKind"`
	PathEntry       string `json:"pathEntry"`
	PathFrom        string `json:"pathFrom"`
	// NotJudged says why the checks left it out; empty when judged.
	NotJudged string `json:"notJudged"`
	// CUDARuntime is the libcudart version it loads, CUDARuntimeSource
	// where that was read.
	CUDARuntime       string `json:"cudaRuntime"`
	CUDARuntimeSource string `json:"cudaRuntimeSource"`
}

// CUDALibrary is one CUDA library a framework loads: the copy the loader
// takes first, what the framework was built for, and the other copies.
// facts.CUDALibrary with every field present (facts leave out an unknown
// wheel, an unknown build version and an empty list of other copies).
type CUDALibrary struct {
	Framework      string        `json:"framework"`
	Name           string        `json:"name"`
	Library        string        `json:"library"`
	Wheel          string        `json:"wheel"`
	Loaded         LibraryCopy   `json:"loaded"`
	BuiltFor       string        `json:"builtFor"`
	BuiltForSource string        `json:"builtForSource"`
	Others         []LibraryCopy `json:"others"`
}

// LibraryCopy is one file of a CUDA library: facts.LibraryCopy with every
// field present.
type LibraryCopy struct {
	Path          string `json:"path"`
	Version       string `json:"version"`
	VersionSource string `json:"versionSource"`
	Via           string `json:"via"`
	ViaObject     string `json:"viaObject"`
}

func libraryCopy(c facts.LibraryCopy) LibraryCopy {
	return LibraryCopy{Path: c.Path, Version: c.Version, VersionSource: c.VersionSource, Via: c.Via, ViaObject: c.ViaObject}
}

// Check is one finding: check.Finding with nodeFault always present
// (findings leave out a false one), its text redacted and bounded.
type Check struct {
	ID      string `json:"id"`
	Status  string `json:"status"`
	Message string `json:"message"`
	Remedy  string `json:"remedy"`
	// NodeFault is check.Finding.NodeFault: the finding is about the
	// node's health, not about the image and the driver.
	NodeFault bool `json:"nodeFault"`
}

// Command is what gpu-preflight was asked to run.
type Command struct {
	// Argv is the command as ArgvRecord says: redacted (the default),
	// empty, or as given; at most MaxRecordArgs elements and
	// maxRecordArgvBytes, each value cut like an environment value.
	Argv []string `json:"argv"`
	// ArgvSHA256 is ArgvDigest of the command as given, before redaction
	// and cut, so two runs of one command show the same digest whatever
	// the record keeps of it; empty without a command and under
	// ArgvNone.
	ArgvSHA256 string `json:"argvSha256"`
	// ArgvRecord is PREFLIGHT_RECORD_ARGV: one of ArgvModes.
	ArgvRecord string `json:"argvRecord"`
	// ArgvDropped counts the elements left out of Argv by the caps.
	ArgvDropped int    `json:"argvDropped"`
	Cwd         string `json:"cwd"`
	UID         int    `json:"uid"`
	GID         int    `json:"gid"`
}

// What a record keeps of the command's argv (PREFLIGHT_RECORD_ARGV).
const (
	// ArgvRedacted keeps argv with every credential report/redact
	// recognises replaced, and its digest: the command stays readable, a
	// credential in a form redact does not know would be recorded.
	ArgvRedacted = "redacted"
	// ArgvDigestOnly keeps only the digest: two runs still compare, and
	// nothing of the arguments is written (a short password could still
	// be confirmed by guessing the whole command line).
	ArgvDigestOnly = "digest"
	// ArgvNone keeps neither.
	ArgvNone = "none"
	// ArgvFull keeps argv as given, cut to the caps, credentials included:
	// only for commands known to carry none.
	ArgvFull = "full"
)

// ArgvModes are the values PREFLIGHT_RECORD_ARGV takes, the default first.
var ArgvModes = []string{ArgvRedacted, ArgvDigestOnly, ArgvNone, ArgvFull}

// MaxRecordArgs bounds how many argv elements a record keeps; argv as a
// whole is bounded by maxRecordArgvBytes. A training command has a few
// dozen; the kernel allows about 2 MiB of them (ARG_MAX), which would make
// every record, ledger line and provenance log line as large.
const MaxRecordArgs = 1024

// maxRecordArgvBytes bounds the bytes of the recorded argv's elements.
const maxRecordArgvBytes = 64 << 10

// ArgvDigest is the lower-case hex SHA-256 of argv with each element
// followed by a NUL byte (an element cannot hold one, so the encoding is
// unambiguous: ["a b"] and ["a", "b"] differ). Empty for a nil argv.
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
// could split a credential from the text that marks it) and only the
// elements it may keep.
func newCommand(argv []string, mode string) Command {
	c := Command{Argv: []string{}, ArgvRecord: mode}
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

// Outcome is how the run ended: a supervised command's end, or why the
// command never ran (not found, not executable, or gpu-preflight was ended
// by a signal before starting it).
type Outcome struct {
	// ExitCode is the command's exit status, or 128+Signal when killed.
	ExitCode int `json:"exitCode"`
	// Signal is the signal that killed it; 0 when it exited.
	Signal          int     `json:"signal"`
	FinishedAt      string  `json:"finishedAt"`
	DurationSeconds float64 `json:"durationSeconds"`
	// NotStarted says why the command never ran; empty when it started.
	NotStarted string `json:"notStarted,omitempty" record:",omitempty"`
}

// Inputs is everything New needs. Nothing in New reads the clock, the
// environment or the file system.
type Inputs struct {
	Facts    facts.Facts
	Findings []check.Finding
	// Decision is policy's decision on the findings, recorded as it is.
	Decision decision.Decision
	// Argv is the command to run, without gpu-preflight's own arguments.
	Argv []string
	// ArgvRecord is what the record keeps of Argv: one of ArgvModes, ""
	// for ArgvRedacted.
	ArgvRecord string
	Cwd        string
	UID, GID   int
	// Environ is the process environment.
	Environ envvars.Env
	// ToolVersion and ToolCommit identify the gpu-preflight build.
	ToolVersion, ToolCommit string
	// Now is when the run started.
	Now time.Time
	// RunID overrides the random run id (tests); "" generates one.
	RunID string
}

// NewRunID returns 128 random bits as 32 lower-case hex digits.
func NewRunID() string {
	var b [16]byte
	// The getrandom(2) system call, straight from the kernel's pool:
	// crypto/rand, and x/sys's Getrandom too, would first set up the
	// vDSO's random state for the thread (a mapping, its page faults and
	// a TLB shootdown on every CPU the process runs on: 30-40 us at
	// start-up) to read 16 bytes once. Before the pool is initialised
	// (early boot) it blocks; a short read cannot happen below 256 bytes.
	var errno unix.Errno = unix.EINTR
	for errno == unix.EINTR {
		_, _, errno = unix.Syscall(unix.SYS_GETRANDOM, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), 0)
	}
	if errno != 0 {
		// A kernel without getrandom (before 3.17): crypto/rand knows the
		// fallbacks, and never fails on Linux (Go 1.24+ crashes instead).
		_, _ = rand.Read(b[:])
	}
	return hex.EncodeToString(b[:])
}

// New builds the record. Every value that came from the environment, argv or
// a finding's text is redacted here.
func New(in Inputs) Record {
	id := in.RunID
	if id == "" {
		id = NewRunID()
	}
	h := in.Facts.Host
	c := in.Facts.Container
	r := Record{
		SchemaVersion: SchemaVersion,
		RunID:         id,
		StartedAt:     in.Now.UTC().Format(TimeLayout),
		Tool:          Tool{Version: in.ToolVersion, Commit: in.ToolCommit},
		Host: Host{
			Hostname: h.Hostname,
			Kernel:   h.Kernel,
			Driver: Driver{
				Version:           h.Driver.Version,
				CUDAVersion:       h.Driver.CUDAVersion,
				Source:            h.Driver.Source,
				CUDAVersionSource: h.Driver.CUDAVersionSource,
				OpenKernelModule:  h.Driver.OpenKernelModule,
			},
			GPUs:        make([]GPU, 0, len(h.GPUs)),
			DeviceNodes: nonNil(h.DeviceNodes),
			NVML: NVML{
				Outcome:        h.NVML.Outcome,
				Error:          redact.Value(h.NVML.Error),
				Via:            h.NVML.Via,
				Version:        h.NVML.Version,
				DurationMillis: h.NVML.DurationMillis,
			},
			ShmBytes: h.ShmBytes,
			Cgroup:   Cgroup{Version: h.Cgroup.Version, MemoryLimitBytes: h.Cgroup.MemoryBytes, CPULimit: h.Cgroup.CPUs},
			CUDA:     newCUDA(h.CUDA),
		},
		Image: Image{
			CUDAVersion:     c.CUDA.Version,
			CUDAVersionFull: c.CUDA.Full,
			CUDASource:      capValue(c.CUDA.Source),
			CUDASourceKind:  c.CUDA.Kind,
			CUDASources:     make([]facts.CUDASource, 0, len(c.CUDA.Others)),
			Requirements:    make([]facts.Requirement, 0, len(c.Requirements)),
			RequireDisabled: c.RequireDisabled,
			CuDNNVersion:    c.Stack.CuDNN.Version,
			NCCLVersion:     c.Stack.NCCL.Version,
			TensorRTVersion: c.Stack.TensorRT.Version,
			Compat:          nonNil(c.Compat),
			Frameworks:      make([]Framework, 0, len(c.Frameworks)),
			ScanSource:      c.ScanSource,
		},
		Checks:       make([]Check, 0, len(in.Findings)),
		Decision:     in.Decision,
		Command:      newCommand(in.Argv, in.ArgvRecord),
		Orchestrator: newOrchestrator(in.Facts.Orchestrator),
		Env:          redact.Env(in.Environ),
	}
	for _, g := range h.GPUs {
		r.Host.GPUs = append(r.Host.GPUs, GPU{
			Index: g.Index, Name: g.Name, UUID: g.UUID, PCIBusID: g.PCIBusID, Brand: g.Brand,
			ComputeCapability: g.ComputeCapability, Architecture: g.Architecture,
			MemoryBytes: g.MemoryBytes, MIGMode: g.MIGMode, PersistenceMode: g.PersistenceMode,
			ECCUncorrectedVolatile: g.ECCUncorrectedVolatile, RetiredPagesPending: g.RetiredPagesPending,
			MIGDevices: g.MIGDevices,
			Errors:     nonNilMap(g.Errors),
		})
	}
	for _, q := range c.Requirements {
		r.Image.Requirements = append(r.Image.Requirements, facts.Requirement{Var: q.Var, Value: capValue(redact.Value(q.Value))})
	}
	for _, o := range c.CUDA.Others {
		r.Image.CUDASources = append(r.Image.CUDASources, facts.CUDASource{Kind: o.Kind, Version: o.Version, Full: o.Full, Source: capValue(o.Source)})
	}
	for _, f := range c.Frameworks {
		r.Image.Frameworks = append(r.Image.Frameworks, Framework{
			Name: f.Name, Version: f.Version, CUDAVersion: f.CUDAVersion,
			CuDNNVersion: f.CuDNNVersion, Build: f.Build, Archs: nonNil(f.Archs),
			Environment: capValue(f.Environment), EnvironmentKind: f.EnvironmentKind,
			PathEntry: capValue(f.PathEntry), PathFrom: capValue(f.PathFrom), NotJudged: capValue(f.NotJudged),
			CUDARuntime: f.CUDARuntime, CUDARuntimeSource: capValue(f.CUDARuntimeSource),
		})
	}
	r.Image.CUDALibraries = make([]CUDALibrary, 0, len(c.CUDALibraries))
	for _, l := range c.CUDALibraries {
		cl := CUDALibrary{Framework: l.Framework, Name: l.Name, Library: l.Library, Wheel: l.Wheel,
			Loaded: libraryCopy(l.Loaded), BuiltFor: l.BuiltFor, BuiltForSource: l.BuiltForSource,
			Others: make([]LibraryCopy, 0, len(l.Others))}
		for _, o := range l.Others {
			cl.Others = append(cl.Others, libraryCopy(o))
		}
		r.Image.CUDALibraries = append(r.Image.CUDALibraries, cl)
	}
	im := c.Identity
	r.Image.Ref = redact.Value(im.Ref)
	r.Image.Digest = redact.Value(im.Digest)
	r.Image.Revision = redact.Value(im.Revision)
	r.Image.Created = redact.Value(im.Created)
	r.Image.Source = redact.Value(im.SourceURL)
	r.Image.IdentitySource = im.From
	r.Image.Pinned = imageref.ValidDigest(im.Digest)
	r.Host.Driver.Branch = driverBranch(h.Driver, in.Now)
	for _, f := range in.Findings {
		r.Checks = append(r.Checks, Check{
			ID: f.ID, Status: string(f.Status),
			Message: capValue(redact.Value(f.Message)), Remedy: capValue(redact.Value(f.Remedy)),
			NodeFault: f.NodeFault,
		})
	}
	r.Command.Cwd, r.Command.UID, r.Command.GID = capValue(redact.Value(in.Cwd)), in.UID, in.GID
	r.Decision.Blocking = nonNil(in.Decision.Blocking)
	r.Env, r.EnvDropped = capEnv(r.Env)
	for k, v := range r.Env {
		r.Env[k] = capValue(v)
	}
	for _, p := range []*string{&r.Image.Ref, &r.Image.Digest, &r.Image.Revision, &r.Image.Created, &r.Image.Source} {
		*p = capValue(*p)
	}
	return r
}

// maxRecordValueBytes bounds each string the record copies from the
// environment or a finding's text. One environment string holds up to
// 128 KiB (execve's MAX_ARG_STRLEN) and the whole record is also one log
// line; real values (PATH, LD_LIBRARY_PATH, NVIDIA_REQUIRE_CUDA, XLA_FLAGS)
// are well under 4 KiB.
const maxRecordValueBytes = 4096

// MaxRecordEnv bounds how many variables a record's env keeps. Real
// containers set a few dozen allow-listed variables (NGC images about
// forty); a thousand is an environment generated by something, and every
// one of them would also land in the provenance log line.
const MaxRecordEnv = 512

// capEnv keeps the first MaxRecordEnv names of env in byte order and
// returns how many it dropped.
func capEnv(env map[string]string) (map[string]string, int) {
	if len(env) <= MaxRecordEnv {
		return env, 0
	}
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	slices.Sort(names)
	kept := make(map[string]string, MaxRecordEnv)
	for _, k := range names[:MaxRecordEnv] {
		kept[k] = env[k]
	}
	return kept, len(env) - MaxRecordEnv
}

// capValue cuts s to maxRecordValueBytes, saying how long it was.
func capValue(s string) string {
	return truncate.String(s, maxRecordValueBytes)
}

// newOrchestrator redacts o's values: they come from the environment, and
// MASTER_ADDR or PADDLE_MASTER could be URLs.
func newOrchestrator(o facts.Orchestrator) facts.Orchestrator {
	k, s, t, p := &o.Kubernetes, &o.Slurm, &o.Torchrun, &o.Paddle
	for _, v := range []*string{
		&o.JobID, &k.PodName, &k.Namespace, &k.PodUID, &k.NodeName, &k.CompletionIndex, &o.Kubeflow.JobName,
		&s.JobID, &s.StepID, &s.ProcID, &s.LocalID, &s.NodeID, &s.NodeName, &s.NumTasks, &s.Cluster, &s.ArrayJobID, &s.ArrayTaskID,
		&t.Rank, &t.LocalRank, &t.WorldSize, &t.LocalWorldSize, &t.RunID, &t.MasterAddr, &t.MasterPort,
		&p.TrainerID, &p.TrainersNum, &p.JobID, &p.NNodes, &p.Master,
	} {
		*v = redact.Value(*v)
	}
	o.Detected = slices.Clone(o.Detected)
	return o
}

// driverBranch looks the driver's branch up in the lifecycle table.
func driverBranch(d facts.Driver, now time.Time) DriverBranch {
	if !d.Present() {
		return DriverBranch{}
	}
	b, known := compat.DriverLifecycle(d.Version)
	if b.Number == 0 {
		return DriverBranch{}
	}
	out := DriverBranch{Name: b.Name(), Known: known}
	if known {
		if b.Kind != compat.KindUnknown {
			out.Designation = b.Kind.String()
		}
		out.EndOfLife = b.EndOfLifeText()
		out.Supported = b.Supported(now)
	}
	return out
}

// nonNil copies s, giving an empty slice for nil or empty so the field is
// [] rather than null.
func nonNil[T any](s []T) []T {
	return append([]T{}, s...)
}

// Finish fills Outcome for a supervised command that ended at end with the
// given exit code (or 128+signal) and signal (0 when it exited).
func (r *Record) Finish(exitCode, signal int, end time.Time) error {
	return r.finish(exitCode, signal, end, "")
}

// NotStarted fills Outcome for a run whose command never ran: gpu-preflight
// exited at end with exitCode (127 not found, 126 not executable, 128+signal
// when signal ended it first), for the reason why (redacted here: it names
// the command).
func (r *Record) NotStarted(exitCode, signal int, end time.Time, why string) error {
	if why == "" {
		why = "the command did not start"
	}
	return r.finish(exitCode, signal, end, capValue(redact.Value(why)))
}

func (r *Record) finish(exitCode, signal int, end time.Time, notStarted string) error {
	start, err := time.Parse(time.RFC3339Nano, r.StartedAt)
	if err != nil {
		return fmt.Errorf("finish provenance record %s: startedAt %q is not RFC 3339: %w", r.RunID, r.StartedAt, err)
	}
	r.Outcome = &Outcome{
		ExitCode:        exitCode,
		Signal:          signal,
		FinishedAt:      end.UTC().Format(TimeLayout),
		DurationSeconds: end.Sub(start).Seconds(),
		NotStarted:      notStarted,
	}
	return nil
}

// nonNilMap copies m, giving an empty map for nil so the field is {} rather
// than null.
func nonNilMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
