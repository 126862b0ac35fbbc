// Package report is the model of what one run leaves behind: the
// provenance record (docs/schema/README.md) and the text made from it (the
// summary sentence, the abort reason, the Kubernetes termination message,
// `check`'s human report). The record holds the facts as gathered; New
// redacts and bounds every value from outside as it copies it, so a Record
// never holds an unredacted one. Its sub-packages write it.
package report

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/internal/jsonenc"
	"github.com/gpu-preflight/gpu-preflight/internal/truncate"
	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/decision"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/report/redact"
)

// The encoder is generated so that a start builds none by reflection.
//go:generate go run ../internal/cmd/jsongen -type Record -o record_json.go

// EncodedBytes is a capacity to encode a record into at start-up: a
// GPU-less start's record is about 4.5 KB, and growing from nothing would
// touch about 16 KB.
const EncodedBytes = 8 << 10

// SchemaVersion changes on an incompatible change (a field removed,
// renamed or retyped): docs/schema/provenance.v<N>.schema.json.
const SchemaVersion = "1"

// TimeLayout is RFC 3339 in UTC with nine fractional digits, so times sort
// as strings.
const TimeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// Record is one run's provenance record, in the schema's names: every
// field present, empty when unknown; Outcome is null unless the run was
// supervised.
type Record struct {
	SchemaVersion string             `json:"schemaVersion"`
	RunID         string             `json:"runId"`
	StartedAt     string             `json:"startedAt"`
	Tool          Tool               `json:"tool"`
	Host          facts.Host         `json:"host"`
	Image         Image              `json:"image"`
	Checks        []Check            `json:"checks"`
	Decision      decision.Decision  `json:"decision"`
	Command       Command            `json:"command"`
	Orchestrator  facts.Orchestrator `json:"orchestrator"`
	Env           map[string]string  `json:"env"`
	EnvDropped    int                `json:"envDropped"` // allow-listed variables beyond MaxRecordEnv
	Outcome       *Outcome           `json:"outcome"`
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

// Image is facts.Container in the schema's shape: the stack's versions
// and the identity flattened, without the environment (Record.Env).
type Image struct {
	CUDAVersion     string              `json:"cudaVersion"`
	CUDAVersionFull string              `json:"cudaVersionFull"`
	CUDASource      string              `json:"cudaSource"`
	CUDASourceKind  string              `json:"cudaSourceKind"`
	CUDASources     []facts.CUDASource  `json:"cudaSources"`
	Requirements    []facts.Requirement `json:"requirements"`
	RequireDisabled bool                `json:"requireDisabled"`
	CuDNNVersion    string              `json:"cudnnVersion"`
	NCCLVersion     string              `json:"ncclVersion"`
	TensorRTVersion string              `json:"tensorrtVersion"`
	Compat          []facts.CompatLib   `json:"compat"`
	Frameworks      []facts.Framework   `json:"frameworks"`
	CUDALibraries   []facts.CUDALibrary `json:"cudaLibraries"`
	Python          facts.Python        `json:"python"`
	Ref             string              `json:"ref"`
	Digest          string              `json:"digest"`
	Revision        string              `json:"revision"`
	Created         string              `json:"created"`
	Source          string              `json:"source"`
	IdentitySource  string              `json:"identitySource"`
	Pinned          bool                `json:"pinned"`
	ScanSource      string              `json:"scanSource"`
	Ranks           []facts.Ranks       `json:"ranks"` // the launchers' process counts on this node
}

// Check is a check.Finding, its text redacted and bounded.
type Check struct {
	ID        string `json:"id"`
	Status    string `json:"status"`
	Message   string `json:"message"`
	Remedy    string `json:"remedy"`
	NodeFault bool   `json:"nodeFault"`
}

// Outcome is how the run ended: a supervised command's end, or why the
// command never ran.
type Outcome struct {
	ExitCode        int     `json:"exitCode"` // 128+Signal when killed
	Signal          int     `json:"signal"`
	FinishedAt      string  `json:"finishedAt"`
	DurationSeconds float64 `json:"durationSeconds"`
	NotStarted      string  `json:"notStarted,omitempty" record:",omitempty"`
}

// Inputs is everything New needs; New reads no clock, environment or file.
type Inputs struct {
	Facts    facts.Facts
	Findings []check.Finding
	Decision decision.Decision
	// Argv is the command, without gpu-preflight's own arguments;
	// ArgvRecord what the record keeps of it, one of ArgvModes.
	Argv       []string
	ArgvRecord string
	Cwd        string
	UID, GID   int
	Supervised bool
	Environ    envvars.Env // the process environment
	// ToolVersion and ToolCommit identify the gpu-preflight build.
	ToolVersion, ToolCommit string
	Now                     time.Time // when the run started
	RunID                   string    // "" draws one
}

// NewRunID returns 128 random bits as 32 lower-case hex digits.
func NewRunID() string {
	var b [16]byte
	// getrandom(2) itself: crypto/rand would first set up the vDSO's
	// random state, a cost at start-up for 16 bytes read once.
	var errno unix.Errno = unix.EINTR
	for errno == unix.EINTR {
		_, _, errno = unix.Syscall(unix.SYS_GETRANDOM, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), 0)
	}
	if errno != 0 {
		_, _ = rand.Read(b[:]) // a kernel before 3.17
	}
	return hex.EncodeToString(b[:])
}

// New builds the record, redacting every value that came from the
// environment, argv or a finding's text, and bounding it.
func New(in Inputs) Record {
	id := in.RunID
	if id == "" {
		id = NewRunID()
	}
	r := Record{
		SchemaVersion: SchemaVersion,
		RunID:         id,
		StartedAt:     in.Now.UTC().Format(TimeLayout),
		Tool:          Tool{Version: in.ToolVersion, Commit: in.ToolCommit},
		Host:          newHost(in.Facts.Host),
		Image:         newImage(in.Facts.Container),
		Decision:      in.Decision,
		Command:       newCommand(in.Argv, in.ArgvRecord),
		Orchestrator:  newOrchestrator(in.Facts.Orchestrator),
	}
	for _, f := range in.Findings {
		r.Checks = append(r.Checks, Check{ID: f.ID, Status: string(f.Status),
			Message: capValue(redact.Value(f.Message)), Remedy: capValue(redact.Value(f.Remedy)), NodeFault: f.NodeFault})
	}
	r.Decision.Blocking = slices.Clone(in.Decision.Blocking)
	r.Command.Cwd, r.Command.UID, r.Command.GID = capValue(redact.Value(in.Cwd)), in.UID, in.GID
	r.Command.Supervised = in.Supervised
	r.Env, r.EnvDropped = capEnv(redact.Env(in.Environ))
	for k, v := range r.Env {
		r.Env[k] = capValue(v)
	}
	return r
}

// newHost copies h, redacting NVML's error and bounding the texts from the
// driver.
func newHost(h facts.Host) facts.Host {
	h.GPUs = slices.Clone(h.GPUs)
	for i := range h.GPUs {
		h.GPUs[i].Errors = maps.Clone(h.GPUs[i].Errors)
	}
	h.DeviceNodes = slices.Clone(h.DeviceNodes)
	h.NVML.Error = redact.Value(h.NVML.Error)
	c := &h.CUDA
	c.Error, c.Library = capValue(c.Error), capValue(c.Library)
	if c.Init != nil {
		c.Init = capStep(*c.Init)
	}
	c.Devices = slices.Clone(c.Devices)
	for i := range c.Devices {
		d := &c.Devices[i]
		d.Steps = slices.Clone(d.Steps)
		for j := range d.Steps {
			d.Steps[j] = *capStep(d.Steps[j])
		}
	}
	if c.Fatbin != nil {
		f := *c.Fatbin
		f.Targets, f.Error = slices.Clone(f.Targets), capValue(f.Error)
		c.Fatbin = &f
	}
	return h
}

func capStep(s facts.CUDAStep) *facts.CUDAStep {
	s.Message = capValue(s.Message)
	return &s
}

// newImage flattens c, redacting and bounding what came from the
// environment and the image's files.
func newImage(c facts.Container) Image {
	im := Image{
		CUDAVersion: c.CUDA.Version, CUDAVersionFull: c.CUDA.Full,
		CUDASource: capValue(c.CUDA.Source), CUDASourceKind: c.CUDA.Kind,
		CUDASources: slices.Clone(c.CUDA.Others), Requirements: slices.Clone(c.Requirements),
		RequireDisabled: c.RequireDisabled,
		CuDNNVersion:    c.Stack.CuDNN.Version, NCCLVersion: c.Stack.NCCL.Version, TensorRTVersion: c.Stack.TensorRT.Version,
		Compat: slices.Clone(c.Compat), Frameworks: slices.Clone(c.Frameworks), CUDALibraries: slices.Clone(c.CUDALibraries),
		Ref: safe(c.Identity.Ref), Digest: safe(c.Identity.Digest), Revision: safe(c.Identity.Revision),
		Created: safe(c.Identity.Created), Source: safe(c.Identity.SourceURL),
		IdentitySource: c.Identity.From, Pinned: c.Identity.Pinned, ScanSource: c.ScanSource,
	}
	for i := range im.CUDASources {
		im.CUDASources[i].Source = capValue(im.CUDASources[i].Source)
	}
	for i := range im.Requirements {
		im.Requirements[i].Value = safe(im.Requirements[i].Value)
	}
	for i := range im.Frameworks {
		f := &im.Frameworks[i]
		f.Archs = slices.Clone(f.Archs)
		for _, p := range []*string{&f.Environment, &f.PathEntry, &f.PathFrom, &f.NotJudged, &f.CUDARuntimeSource} {
			*p = capValue(*p)
		}
	}
	for i := range im.CUDALibraries {
		im.CUDALibraries[i].Others = slices.Clone(im.CUDALibraries[i].Others)
	}
	im.Ranks = slices.Clone(c.Ranks)
	for i := range im.Ranks {
		im.Ranks[i].Source, im.Ranks[i].Devices = safe(im.Ranks[i].Source), slices.Clone(im.Ranks[i].Devices)
	}
	if c.Python != nil {
		py := &im.Python
		py.Interpreter, py.How, py.Environment, py.Version = safe(c.Python.Interpreter), safe(c.Python.How), safe(c.Python.Environment), safe(c.Python.Version)
		for _, e := range c.Python.Candidates {
			py.Candidates = append(py.Candidates, safe(e))
		}
	}
	return im
}

// newOrchestrator redacts and cuts o's values: they come from the environment, and
// MASTER_ADDR or PADDLE_MASTER could be URLs.
func newOrchestrator(o facts.Orchestrator) facts.Orchestrator {
	k, s, t, p, m := &o.Kubernetes, &o.Slurm, &o.Torchrun, &o.Paddle, &o.MPI
	for _, v := range []*string{
		&o.JobID, &k.PodName, &k.Namespace, &k.PodUID, &k.NodeName, &k.CompletionIndex, &o.Kubeflow.JobName,
		&s.JobID, &s.StepID, &s.ProcID, &s.LocalID, &s.NodeID, &s.NodeName, &s.NumTasks, &s.Cluster, &s.ArrayJobID, &s.ArrayTaskID,
		&s.StepNumNodes, &s.JobNumNodes, &s.NNodes, &s.NTasksPerNode, &s.GPUsPerTask, &s.NTasksPerGPU, &s.TasksPerNode, &s.StepTasksPerNode,
		&t.Rank, &t.LocalRank, &t.WorldSize, &t.LocalWorldSize, &t.RunID, &t.MasterAddr, &t.MasterPort,
		&t.GroupWorldSize, &t.NNodes, &t.NProcPerNode,
		&p.TrainerID, &p.TrainersNum, &p.JobID, &p.NNodes, &p.Master, &p.Devices, &p.NProcPerNode,
		&m.WorldSize, &m.LocalSize, &m.PMISize, &m.LocalNRanks,
	} {
		*v = safe(*v)
	}
	o.Detected = slices.Clone(o.Detected)
	return o
}

// maxRecordValueBytes bounds each string the record copies from outside:
// the record is also one log line, and real values (PATH, XLA_FLAGS,
// NVIDIA_REQUIRE_CUDA) are well under it.
const maxRecordValueBytes = 4096

// MaxRecordEnv bounds the variables a record keeps: NGC images set about
// forty allow-listed ones, and every one also lands in the log line.
const MaxRecordEnv = 512

// capEnv keeps the first MaxRecordEnv names of env in byte order and
// returns how many it dropped.
func capEnv(env map[string]string) (map[string]string, int) {
	if len(env) <= MaxRecordEnv {
		return env, 0
	}
	names := slices.Sorted(maps.Keys(env))
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

// safe is s redacted and cut.
func safe(s string) string { return capValue(redact.Value(s)) }

// Finish fills Outcome for a supervised command that ended at end with the
// given exit code (or 128+signal) and signal (0 when it exited).
func (r *Record) Finish(exitCode, signal int, end time.Time) error {
	return r.finish(exitCode, signal, end, "")
}

// NotStarted fills Outcome for a run whose command never ran: gpu-preflight
// exited at end with exitCode (127 not found, 126 not executable, 128+signal
// when signal ended it first), for the reason why.
func (r *Record) NotStarted(exitCode, signal int, end time.Time, why string) error {
	if why == "" {
		why = "the command did not start"
	}
	return r.finish(exitCode, signal, end, safe(why))
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
