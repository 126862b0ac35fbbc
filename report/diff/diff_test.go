package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/decision"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/orchestrator"
	"github.com/gpu-preflight/gpu-preflight/report"
)

// h100 is one GPU as the NVML probe reports it.
func h100(i int, uuid string) facts.GPU {
	return facts.GPU{
		Index: i, Name: "NVIDIA H100 80GB HBM3", UUID: uuid, PCIBusID: "00000000:1" + string(rune('0'+i)) + ":00.0",
		Brand: "Nvidia", ComputeCapability: "9.0", Architecture: "Hopper", MemoryBytes: 85520809984,
		MIGMode: "disabled", PersistenceMode: "enabled",
	}
}

// baseFacts is a host with driver 535.129.03 (CUDA 12.2) and two H100s,
// running an image with CUDA 12.2 and PaddlePaddle.
func baseFacts() facts.Facts {
	return facts.Facts{
		Host: facts.Host{
			Hostname: "gpu-node-a",
			Kernel:   "5.15.0-91-generic",
			Driver:   facts.Driver{Version: "535.129.03", CUDAVersion: "12.2", Source: "nvml-memfd", CUDAVersionSource: "nvml"},
			GPUs: []facts.GPU{
				h100(0, "GPU-5c4b7a2e-0000-4d7e-9f1a-000000000000"),
				h100(1, "GPU-5c4b7a2e-1111-4d7e-9f1a-111111111111"),
			},
			DeviceNodes: []string{"/dev/nvidia0", "/dev/nvidia1", "/dev/nvidiactl"},
			ShmBytes:    1 << 30,
			NVML:        facts.NVML{Outcome: facts.ProbeOK, Via: "memfd", Version: "12.535.129.03", DurationMillis: 41.5},
		},
		Container: facts.Container{
			Requirements: []facts.Requirement{{Var: "NVIDIA_REQUIRE_CUDA", Value: "cuda>=12.2 brand=tesla,driver>=470,driver<471"}},
			CUDA:         facts.CUDAToolkit{Version: "12.2", Full: "12.2.2"},
			Stack: facts.Stack{
				CuDNN: facts.Component{Version: "8.9.6"},
				NCCL:  facts.Component{Version: "2.19.3"},
			},
			Frameworks: []facts.Framework{{Name: "paddlepaddle", Version: "2.6.1", CUDAVersion: "12.0",
				CuDNNVersion: "8.9", Archs: []string{"sm_80", "sm_90"}}},
			Identity: facts.Identity{Ref: "registry.example/train:v7", Digest: "sha256:" + strings.Repeat("a", 64), Revision: "1f2e3d"},
		},
	}
}

func passAll() []check.Finding {
	var fs []check.Finding
	for _, id := range check.IDs() {
		fs = append(fs, check.Finding{ID: id, Status: check.Pass, Message: id + " ok"})
	}
	return fs
}

func record(f facts.Facts, findings []check.Finding, environ []string, runID string, start time.Time) report.Record {
	f.Orchestrator = orchestrator.FromEnv(envvars.Parse(environ))
	return report.New(report.Inputs{
		Facts:    f,
		Findings: findings,
		Decision: decision.Decision{Policy: "fail", Action: decision.Exec},
		Argv:     []string{"python", "train.py"},
		Cwd:      "/workspace",
		Environ:  envvars.Parse(environ),
		Now:      start,
		RunID:    runID,
	})
}

var t0 = time.Date(2026, 11, 2, 9, 0, 0, 123456789, time.UTC)

// pair builds two records of the same job from base facts, the second
// edited by edit; everything that differs between any two runs (run id,
// start time, probe duration) differs here too.
func pair(edit func(*facts.Facts, *[]check.Finding, *[]string)) (report.Record, report.Record) {
	env := []string{"PATH=/usr/bin", "NCCL_DEBUG=WARN", "RANK=0", "HOSTNAME=gpu-node-a"}
	old := record(baseFacts(), passAll(), env, "0123456789abcdef0123456789abcdef", t0)
	f, fs, env2 := baseFacts(), passAll(), append([]string(nil), env...)
	f.Host.NVML.DurationMillis = 77
	if edit != nil {
		edit(&f, &fs, &env2)
	}
	return old, record(f, fs, env2, "fedcba9876543210fedcba9876543210", t0.Add(36*time.Hour))
}

func TestDiffOfTheSameJobTwiceIsEmpty(t *testing.T) {
	old, new := pair(nil)
	if got := Diff(old, new); len(got) != 0 {
		t.Fatalf("Diff of two runs that differ only in run id, start time and timings = %+v, want none", got)
	}
	if got := Diff(old, old); len(got) != 0 {
		t.Fatalf("Diff of a record with itself = %+v, want none", got)
	}
}

func TestDiffListsDriverAndCUDAFirst(t *testing.T) {
	old, new := pair(func(f *facts.Facts, fs *[]check.Finding, _ *[]string) {
		f.Host.Driver.Version, f.Host.Driver.CUDAVersion = "550.54.15", "12.4"
		f.Host.Hostname = "gpu-node-b"
		f.Container.CUDA = facts.CUDAToolkit{Version: "12.4", Full: "12.4.1"}
		f.Container.Identity.Digest = "sha256:" + strings.Repeat("b", 64)
		(*fs)[0].Status = check.Warn
	})
	got := Diff(old, new)
	want := []Change{
		{"driver", "535.129.03", "550.54.15", true},
		{"driver CUDA", "12.2", "12.4", true},
		{"image CUDA", "12.2.2", "12.4.1", true},
		{"image digest", "sha256:" + strings.Repeat("a", 64), "sha256:" + strings.Repeat("b", 64), true},
		{"check " + check.IDs()[0], "pass", "warn", true},
		{"hostname", "gpu-node-a", "gpu-node-b", false},
	}
	assertChanges(t, got, want)
	if !AnyMatters(got) {
		t.Error("AnyMatters = false for a driver upgrade")
	}
}

func assertChanges(t *testing.T, got, want []Change) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d changes, want %d:\n got %+v\nwant %+v", len(got), len(want), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("change %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestDiffRules(t *testing.T) {
	const (
		u0 = "GPU-5c4b7a2e-0000-4d7e-9f1a-000000000000"
		u1 = "GPU-5c4b7a2e-1111-4d7e-9f1a-111111111111"
		u2 = "GPU-99999999-2222-4d7e-9f1a-222222222222"
	)
	tests := []struct {
		name string
		edit func(*facts.Facts, *[]check.Finding, *[]string)
		want []Change
	}{
		{
			name: "a GPU replaced by another UUID is the set changing, not a rename",
			edit: func(f *facts.Facts, _ *[]check.Finding, _ *[]string) {
				g := facts.GPU{Index: 1, Name: "NVIDIA A100-SXM4-80GB", UUID: u2, PCIBusID: f.Host.GPUs[1].PCIBusID,
					Brand: "Nvidia", ComputeCapability: "8.0", MIGMode: "disabled", PersistenceMode: "enabled"}
				f.Host.GPUs[1] = g
			},
			want: []Change{
				{"GPUs", "2 x NVIDIA H100 80GB HBM3", "1 x NVIDIA H100 80GB HBM3, 1 x NVIDIA A100-SXM4-80GB", true},
				{"GPU " + u1, "NVIDIA H100 80GB HBM3, compute 9.0", "", true},
				{"GPU " + u2, "", "NVIDIA A100-SXM4-80GB, compute 8.0", true},
			},
		},
		{
			name: "GPUs re-enumerated in another order are the same set",
			edit: func(f *facts.Facts, _ *[]check.Finding, _ *[]string) {
				a, b := f.Host.GPUs[0], f.Host.GPUs[1]
				a.Index, b.Index = 1, 0
				f.Host.GPUs[0], f.Host.GPUs[1] = b, a
			},
			want: []Change{
				{"GPU " + u1 + " index", "1", "0", false},
				{"GPU " + u0 + " index", "0", "1", false},
			},
		},
		{
			name: "MIG and persistence mode of one GPU matter, its ECC count does not",
			edit: func(f *facts.Facts, _ *[]check.Finding, _ *[]string) {
				n := uint64(3)
				f.Host.GPUs[0].MIGMode = "enabled"
				f.Host.GPUs[1].PersistenceMode = "disabled"
				f.Host.GPUs[1].ECCUncorrectedVolatile = &n
			},
			want: []Change{
				{"GPU " + u0 + " MIG mode", "disabled", "enabled", true},
				{"GPU " + u1 + " persistence mode", "enabled", "disabled", true},
				{"GPU " + u1 + " uncorrected ECC errors", "", "3", false},
			},
		},
		{
			name: "the last GPU gone",
			edit: func(f *facts.Facts, _ *[]check.Finding, _ *[]string) { f.Host.GPUs = nil },
			want: []Change{
				{"GPUs", "2 x NVIDIA H100 80GB HBM3", "none", true},
				{"GPU " + u0, "NVIDIA H100 80GB HBM3, compute 9.0", "", true},
				{"GPU " + u1, "NVIDIA H100 80GB HBM3, compute 9.0", "", true},
			},
		},
		{
			name: "the open kernel module instead of the proprietary one",
			edit: func(f *facts.Facts, _ *[]check.Finding, _ *[]string) { f.Host.Driver.OpenKernelModule = true },
			want: []Change{{"driver kernel module", "proprietary", "open", true}},
		},
		{
			name: "image identity, requirement, cuDNN and NCCL in the order a person looks",
			edit: func(f *facts.Facts, _ *[]check.Finding, _ *[]string) {
				c := &f.Container
				c.Stack.NCCL.Version = "2.20.5"
				c.Stack.CuDNN.Version = "9.1.0"
				c.Identity.Revision = "9a8b7c"
				c.Identity.Ref = "registry.example/train:v8"
				c.Requirements[0].Value = "cuda>=12.4"
			},
			want: []Change{
				{"image NVIDIA_REQUIRE_CUDA", "cuda>=12.2 brand=tesla,driver>=470,driver<471", "cuda>=12.4", true},
				{"image ref", "registry.example/train:v7", "registry.example/train:v8", true},
				{"image revision", "1f2e3d", "9a8b7c", true},
				{"cuDNN", "8.9.6", "9.1.0", true},
				{"NCCL", "2.19.3", "2.20.5", true},
			},
		},
		{
			name: "a framework upgraded, one added; target order is not a change",
			edit: func(f *facts.Facts, _ *[]check.Finding, _ *[]string) {
				p := &f.Container.Frameworks[0]
				p.Version, p.CUDAVersion = "3.0.0", "12.3"
				p.Archs = []string{"sm_90", "sm_80"}
				f.Container.Frameworks = append(f.Container.Frameworks,
					facts.Framework{Name: "torch", Version: "2.3.0", CUDAVersion: "12.1", Archs: []string{"sm_90"}})
			},
			want: []Change{
				{"paddlepaddle", "2.6.1", "3.0.0", true},
				{"paddlepaddle CUDA", "12.0", "12.3", true},
				{"torch", "", "2.3.0, CUDA 12.1", true},
			},
		},
		{
			name: "a framework's GPU targets changed",
			edit: func(f *facts.Facts, _ *[]check.Finding, _ *[]string) {
				f.Container.Frameworks[0].Archs = []string{"sm_80", "sm_90", "compute_90"}
			},
			want: []Change{{"paddlepaddle GPU targets", "sm_80 sm_90", "compute_90 sm_80 sm_90", true}},
		},
		{
			name: "a framework removed",
			edit: func(f *facts.Facts, _ *[]check.Finding, _ *[]string) { f.Container.Frameworks = nil },
			want: []Change{{"paddlepaddle", "2.6.1, CUDA 12.0", "", true}},
		},
		{
			name: "NCCL tuning variables matter, ranks and host names do not",
			edit: func(_ *facts.Facts, _ *[]check.Finding, env *[]string) {
				*env = []string{"PATH=/usr/bin", "NCCL_DEBUG=INFO", "NCCL_P2P_DISABLE=1", "RANK=3", "HOSTNAME=gpu-node-c",
					"CUDA_VISIBLE_DEVICES=1"}
			},
			want: []Change{
				{"env NCCL_DEBUG", "WARN", "INFO", true},
				{"env NCCL_P2P_DISABLE", "", "1", true},
				{"orchestrator.torchrun.rank", "0", "3", false},
				{"env CUDA_VISIBLE_DEVICES", "", "1", false},
				{"env HOSTNAME", "gpu-node-a", "gpu-node-c", false},
				{"env RANK", "0", "3", false},
			},
		},
		{
			name: "a check that now fails; its message is minor",
			edit: func(_ *facts.Facts, fs *[]check.Finding, _ *[]string) {
				(*fs)[1].Status = check.Error
				(*fs)[1].Message = "it broke"
			},
			want: []Change{
				{"check " + check.IDs()[1], "pass", "error", true},
				{"check " + check.IDs()[1] + " message", check.IDs()[1] + " ok", "it broke", false},
			},
		},
		{
			name: "a check no longer run",
			edit: func(_ *facts.Facts, fs *[]check.Finding, _ *[]string) { *fs = (*fs)[1:] },
			want: []Change{{"check " + check.IDs()[0], "pass", "", true}},
		},
		{
			name: "kernel and shm size are minor",
			edit: func(f *facts.Facts, _ *[]check.Finding, _ *[]string) {
				f.Host.Kernel = "6.8.0-31-generic"
				f.Host.ShmBytes = 64 << 20
			},
			want: []Change{
				{"kernel", "5.15.0-91-generic", "6.8.0-31-generic", false},
				{"/dev/shm bytes", "1073741824", "67108864", false},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, new := pair(tt.edit)
			assertChanges(t, Diff(old, new), tt.want)
		})
	}
}

func TestDiffMinorCheckMessageAndDecision(t *testing.T) {
	old, new := pair(nil)
	new.Checks[1].Message = "it broke"
	new.Decision = decision.Decision{Policy: "strict", Action: decision.Abort, ExitCode: 78}
	assertChanges(t, Diff(old, new), []Change{
		{"decision", "exec", "abort (exit 78)", true},
		{"policy", "fail", "strict", true},
		{"check " + check.IDs()[1] + " message", check.IDs()[1] + " ok", "it broke", false},
	})
}

func TestDiffSupervisedOutcomeIsMinorAndTimingsNeverCount(t *testing.T) {
	old, new := pair(nil)
	if err := old.Finish(0, 0, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := new.Finish(137, 9, t0.Add(37*time.Hour)); err != nil {
		t.Fatal(err)
	}
	got := Diff(old, new)
	assertChanges(t, got, []Change{
		{"command exit code", "0", "137", false},
		{"command signal", "0", "9", false},
	})
	if AnyMatters(got) {
		t.Error("AnyMatters = true when only the command's exit differs")
	}
}

// TestChangesKeepTheirValuesWhenDiffRunsAgain: Diff reuses its room for
// the records' JSON, so what it returns must hold none of it.
func TestChangesKeepTheirValuesWhenDiffRunsAgain(t *testing.T) {
	finished := func(exit, signal int) (report.Record, report.Record) {
		old, new := pair(nil)
		if err := old.Finish(0, 0, t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := new.Finish(exit, signal, t0.Add(37*time.Hour)); err != nil {
			t.Fatal(err)
		}
		return old, new
	}
	got := Diff(finished(137, 9))
	for exit := range 20 {
		Diff(finished(exit+200, 0))
	}
	assertChanges(t, got, []Change{
		{"command exit code", "0", "137", false},
		{"command signal", "0", "9", false},
	})
}

// TestDiffReadsRecordsFromJSON proves Diff works on records as written to
// disk and read back, including fields this version does not know.
func TestDiffReadsRecordsFromJSON(t *testing.T) {
	old, new := pair(func(f *facts.Facts, _ *[]check.Finding, _ *[]string) {
		f.Host.Driver.Version = "550.54.15"
	})
	var back [2]report.Record
	for i, r := range []report.Record{old, new} {
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &back[i]); err != nil {
			t.Fatal(err)
		}
	}
	assertChanges(t, Diff(back[0], back[1]), []Change{{"driver", "535.129.03", "550.54.15", true}})
}

func TestRender(t *testing.T) {
	tests := []struct {
		name    string
		changes []Change
		want    string
	}{
		{"nothing", nil, "no changes\n"},
		{"only minor", []Change{{"hostname", "a", "b", false}},
			"nothing that matters changed\nminor:\n  hostname: a -> b\n"},
		{"driver upgrade", []Change{
			{"driver", "535.129.03", "550.54.15", true},
			{"driver CUDA", "12.2", "12.4", true},
			{"GPU GPU-1", "", "NVIDIA H100 80GB HBM3, compute 9.0", true},
			{"hostname", "a", "b", false},
			{"kernel", "5.15", "6.8", false},
		}, "driver: 535.129.03 -> 550.54.15\n" +
			"driver CUDA: 12.2 -> 12.4\n" +
			"GPU GPU-1: (none) -> NVIDIA H100 80GB HBM3, compute 9.0\n" +
			"minor:\n  hostname: a -> b\n  kernel: 5.15 -> 6.8\n"},
		{"values from a record escaped for the terminal", []Change{
			{"GPU GPU-1", "NVIDIA H100", "NVIDIA H100\x1b]0;PWNED\x07\x1b[2J\u202e", true},
			{"env X\u200b", "a\nforged: line", "\u009b2J", false},
		}, "GPU GPU-1: NVIDIA H100 -> NVIDIA H100\\x1b]0;PWNED\\x07\\x1b[2J\\u202e\n" +
			"minor:\n  env X\\u200b: a\\nforged: line -> \\u009b2J\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Render(&b, tt.changes); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("Render =\n%s\nwant\n%s", b.String(), tt.want)
			}
		})
	}
}

// FuzzDiff diffs two records, each a full record with a fuzzed JSON object
// decoded over it (so small inputs reach every part of a record, and the
// fuzzer minimizes quickly): Diff must not panic, a record compared with
// itself has no changes, and Render writes any result.
func FuzzDiff(f *testing.F) {
	base, _ := pair(nil)
	if err := base.Finish(0, 0, t0.Add(time.Hour)); err != nil {
		f.Fatal(err)
	}
	// Each execution decodes a fresh copy: decoding over a shared record
	// would write into its slices and maps.
	baseJSON, err := json.Marshal(base)
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range [][2]string{
		{`{}`, `{"host":{"driver":{"version":"550.54.15","cudaVersion":"12.4"}}}`},
		{`{"host":{"gpus":[{"uuid":"GPU-1"},{"uuid":"GPU-1","index":3}]}}`, `{"host":{"gpus":[{}]},"env":{"NCCL_DEBUG":"INFO"}}`},
		{`{"image":{"frameworks":[{"name":"torch"},{"name":"torch","version":"2"}]}}`, `{"image":{"frameworks":null}}`},
		{`{"checks":[{"id":"driver","status":"pass"},{"id":"driver"}]}`, `{"checks":[],"decision":{"action":"abort","exitCode":78}}`},
		{`{"outcome":null}`, `{"outcome":{"exitCode":137,"signal":9},"image":{"requirements":[{"var":"A"},{"var":"A"}]}}`},
		{`{"image":{"compat":[{"path":"/usr/local/cuda/compat/libcuda.so.1"}]}}`, `{"orchestrator":{"detected":["slurm"],"slurm":{"jobId":"7"}}}`},
		{`{"host":{"hostname":"n\u00e9\"x\\"}}`, `{"command":{"argv":["a","","\ud800","é"]},"host":{"kernel":"\u0000"}}`},
	} {
		f.Add([]byte(seed[0]), []byte(seed[1]))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var ra, rb report.Record
		if json.Unmarshal(baseJSON, &ra) != nil || json.Unmarshal(baseJSON, &rb) != nil {
			t.Fatal("the base record does not decode")
		}
		if json.Unmarshal(a, &ra) != nil || json.Unmarshal(b, &rb) != nil {
			return
		}
		_ = Diff(ra, rb)
		js := string(appendJSON(rb, nil))
		got, keys := map[string]string{}, []byte(nil)
		flatten(js, got, &keys)
		if want := decodedPaths(t, js); !maps.Equal(got, want) {
			t.Fatalf("flatten(%s) =\n%v\nwant, as encoding/json decodes it,\n%v", js, got, want)
		}
		if got := Diff(ra, ra); len(got) != 0 {
			t.Fatalf("Diff of a record with itself = %+v", got)
		}
		if err := Render(io.Discard, Diff(rb, ra)); err != nil {
			t.Fatal(err)
		}
	})
}

// decodedPaths is flatten's rule read through encoding/json: every path
// to a scalar, arrays of scalars joined, null and "" left out.
func decodedPaths(t *testing.T, js string) map[string]string {
	dec := json.NewDecoder(strings.NewReader(js))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	var put func(path string, v any)
	text := func(v any) string {
		if v == nil {
			return ""
		}
		return fmt.Sprint(v)
	}
	put = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				put(join(path, k), x)
			}
		case []any:
			var scalars []string
			for i, x := range v {
				switch x.(type) {
				case map[string]any, []any:
					put(join(path, strconv.Itoa(i)), x)
				default:
					scalars = append(scalars, text(x))
				}
			}
			if len(scalars) > 0 {
				m[path] = strings.Join(scalars, " ")
			}
		default:
			if s := text(v); s != "" {
				m[path] = s
			}
		}
	}
	put("", v)
	maps.DeleteFunc(m, func(p, _ string) bool { return isCovered(p) })
	return m
}

// Two commands that redact to the same argv differ in their digest, a
// minor change named as such.
func TestDiffNamesACommandThatRedactionHides(t *testing.T) {
	old, new := pair(nil)
	old.Command = report.New(report.Inputs{Argv: []string{"train", "--token", "one"}}).Command
	new.Command = report.New(report.Inputs{Argv: []string{"train", "--token", "two"}}).Command
	got := Diff(old, new)
	assertChanges(t, got, []Change{{"command digest", old.Command.ArgvSHA256, new.Command.ArgvSHA256, false}})
}

// A sick node's health, the NVML library, the launchers' rank counts and
// NCCL's predicted network are changes that matter.
func TestDiffShowsNodeHealthAndTransport(t *testing.T) {
	healthy := func(f *facts.Facts) {
		mounted := true
		f.Host.GPUs[0].Health = &facts.GPUHealth{RemappedRows: &facts.RemappedRows{}, Fabric: &facts.Fabric{State: facts.FabricCompleted},
			NVLink: &facts.NVLink{Active: 18}, PCIe: &facts.PCIe{MaxGeneration: 5, MaxWidth: 16}}
		f.Host.NVML.Library = &facts.DriverLibrary{Version: "550.54.15", Mounted: &mounted}
		f.Container.Ranks = []facts.Ranks{{Launcher: facts.LauncherTorchrun, Source: "--nproc-per-node=8", PerNode: 8}}
		f.Host.Transport.Prediction = facts.TransportPrediction{Network: facts.NetIB, Devices: []string{"mlx5_0:1", "mlx5_1:1"},
			LinkLayer: facts.LinkInfiniBand, GDR: "peermem", Summary: "NET/IB"}
	}
	f := baseFacts()
	healthy(&f)
	old := record(f, passAll(), nil, "0123456789abcdef0123456789abcdef", t0)
	g := baseFacts()
	healthy(&g)
	h := g.Host.GPUs[0].Health
	h.RemappedRows.Pending, h.Fabric.State, h.NVLink.Active, h.PCIe.MaxWidth = true, facts.FabricNotStarted, 14, 8
	h.ClockEvents = []string{facts.ClockHWSlowdown}
	unmounted := false
	g.Host.NVML.Library = &facts.DriverLibrary{Version: "535.183.01", Mounted: &unmounted}
	g.Container.Ranks[0].PerNode = 16
	g.Host.Transport.Prediction = facts.TransportPrediction{Network: facts.NetSocket, Summary: "NET/Socket"}
	changes := Diff(old, record(g, passAll(), nil, "fedcba9876543210fedcba9876543210", t0))
	for _, want := range []string{"row remap pending", "fabric state", "active NVLinks", "PCIe max width", "clock events",
		"NVML library version", "NVML library mounted", "ranks per node", "NCCL network", "NCCL devices", "NCCL link layer", "GPUDirect RDMA"} {
		if !slices.ContainsFunc(changes, func(c Change) bool { return strings.HasSuffix(c.Field, want) && c.Matters }) {
			t.Errorf("no change that matters for %s in %+v", want, changes)
		}
	}
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}
