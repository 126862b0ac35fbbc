package tracetest

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"time"
)

// FleetStart is when SmallFleet's first run starts.
var FleetStart = time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)

// Image digests of SmallFleet's rollout.
var (
	DigestA = "sha256:" + strings.Repeat("a", 64)
	DigestB = "sha256:" + strings.Repeat("b", 64)
)

// SmallFleet is 26 runs, all supervised (the default as a container's
// PID 1): job llm's 8 ranks, rank 5 on a node already on a newer driver;
// the nightly job of train, 6 runs on digest A, then, rolled out to
// digest B, 6 that fail; 3 runs on a node whose NVML hangs (node-fault
// aborts); a run whose command was not found; and the last, LongRun, a
// record of 40 KiB (64 tuning variables of 512 bytes).
func SmallFleet() []Run {
	var runs []Run
	at := FleetStart
	add := func(r Run) {
		r.RunID = RunID(7000 + len(runs))
		r.At = at
		at = at.Add(10 * time.Minute)
		if r.Driver == "" {
			r.Driver, r.DriverCUDA = "535.161.08", "12.2"
		}
		if r.Exit == nil && len(r.Abort) == 0 {
			r.Exit = Exit(0)
		}
		if r.GPUs == 0 {
			r.GPUs = 8
		}
		runs = append(runs, r)
	}
	for rank := range 8 {
		r := Run{Node: fmt.Sprintf("node-%02d", rank), Job: "llm", Rank: rank,
			Digest: DigestA, Ref: "registry.example/ml/llm:1.0"}
		if rank == 5 {
			r.Driver, r.DriverCUDA = "550.54.15", "12.4"
		}
		add(r)
	}
	for i := range 12 {
		r := Run{Node: fmt.Sprintf("node-%02d", 8+i%3), Job: "train-nightly",
			Digest: DigestA, Ref: "registry.example/ml/train:nightly"}
		if i >= 6 {
			r.Digest, r.Exit = DigestB, Exit(1)
		}
		add(r)
	}
	for i := range 3 {
		add(Run{Node: "node-sick", Job: fmt.Sprintf("eval-%d", i), Digest: DigestA,
			Ref: "registry.example/ml/eval:1", Abort: []string{"nvml"}, NodeFault: true})
	}
	add(Run{Node: "node-11", Job: "typo", Digest: DigestA, Ref: "registry.example/ml/eval:1",
		Exit: Exit(127), NotStarted: `exec: "pyhton": executable file not found in $PATH`})
	long := Run{Node: "node-12", Job: "big-env", Digest: DigestA, Ref: "registry.example/ml/eval:1"}
	for i := range 64 {
		long.Envs = append(long.Envs, fmt.Sprintf("NCCL_TEST_%02d=%s", i, strings.Repeat("x", 512)))
	}
	add(long)
	add(Run{Node: "node-13", Job: "big-env", Digest: DigestA, Ref: "registry.example/ml/eval:1"})
	return runs
}

// LongRun is the index of SmallFleet's run with the long record.
const LongRun = 24

// Entries are what the fleet's containers wrote, in time order: each
// run's gpu-preflight lines on stderr and a line of the job's output on
// stdout; the run at legacy (-1: none) by an older gpu-preflight, whose
// provenance line held the whole record.
func Entries(runs []Run, legacy int) []Entry {
	var es []Entry
	for i, r := range runs {
		id := fmt.Sprintf("%x", sha256.Sum256([]byte(r.RunID)))
		e := Entry{Node: r.Node, Namespace: "ml", Pod: fmt.Sprintf("%s-%d", r.Job, r.Rank), Container: "train", ID: id}
		lines := Stderr(r)
		for j, l := range lines {
			e.Line, e.Stream, e.Time = l, "stderr", r.At.Add(time.Duration(j)*time.Millisecond)
			if i == legacy && strings.Contains(string(l), `"message":"provenance"`) {
				e.Line = LegacyLine(r)
			}
			if strings.Contains(string(l), `"event":"finished"`) {
				e.Time = r.End()
				es = append(es, Entry{Line: []byte("epoch 1: loss 0.42"), Stream: "stdout", Time: r.At.Add(time.Minute),
					Node: e.Node, Namespace: e.Namespace, Pod: e.Pod, Container: e.Container, ID: id})
			}
			es = append(es, e)
		}
	}
	return es
}
