package tracetest

import (
	"fmt"
	"time"
)

// Shape is a generated fleet: jobs resubmitted under their ids, a driver
// upgrade half way, a node whose NVML hangs, an image in ten failing.
type Shape struct {
	Records, Nodes, Images, Jobs, Ranks, GPUs int
}

// BenchShape is bench/trace.sh's fleet of n runs.
func BenchShape(n int) Shape {
	return Shape{Records: n, Nodes: 2000, Images: 100, Jobs: 5000, Ranks: 16, GPUs: 8}
}

// Run is the fleet's run i, of s.Records.
func (s Shape) Run(i int) Run {
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	step := 30 * 24 * time.Hour / time.Duration(s.Records)
	attempt := i / (s.Jobs * s.Ranks)
	j := (i / s.Ranks) % s.Jobs
	rank := i % s.Ranks
	node := (j*s.Ranks + rank) % s.Nodes
	img := (j + attempt) % s.Images
	r := Run{
		RunID: RunID(i), At: start.Add(time.Duration(i) * step),
		Node: fmt.Sprintf("gpu-node-%04d", node), Job: fmt.Sprintf("job-%05d", j), Rank: rank,
		Driver: "535.161.08", DriverCUDA: "12.2", GPUs: s.GPUs,
		Digest: fmt.Sprintf("sha256:%064x", img),
		Ref:    fmt.Sprintf("registry.example/ml/train-%d:%d", img%10, img),
	}
	if i > s.Records/2 && node < 48 && node%16 == 3 {
		r.Driver, r.DriverCUDA = "550.54.15", "12.4"
	}
	switch {
	case node == 9:
		r.Abort, r.NodeFault = []string{"nvml"}, true
	case img%10 == 7 && i > s.Records/3:
		r.Exit = Exit(1)
	default:
		r.Exit = Exit(0)
	}
	return r
}

// BenchForms write runs as bench/trace.sh reads them: containerd's CRI
// files and logcli's jsonl.
var BenchForms = map[string]func([]Run) []byte{
	"cri":  func(rs []Run) []byte { return formNamed("cri-containerd")(Entries(rs, -1)) },
	"loki": func(rs []Run) []byte { return formNamed("loki-logcli-jsonl")(Entries(rs, -1)) },
}

func formNamed(name string) func([]Entry) []byte {
	for _, f := range Forms {
		if f.Name == name {
			return f.Write
		}
	}
	panic("tracetest: no form " + name)
}
