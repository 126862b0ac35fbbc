package check

import (
	"fmt"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// GPUInUse is the `gpu-in-use` check: no visible non-MIG GPU runs a
// process, holds memory or forbids contexts (docs/node-health.md).
var GPUInUse = Check{ID: "gpu-in-use", rule: gpuInUse}

// heldBytes counts as held: an idle GPU has a few MiB allocated.
const heldBytes = 1 << 30

func gpuInUse(in Input) Finding {
	gpus, skip := healthGPUs(in)
	if skip != nil {
		return *skip
	}
	siblings := ""
	for _, r := range in.Facts.Container.Ranks {
		if r.PerRank() && r.PerNode > 1 {
			siblings = r.Source
		}
	}
	const elsewhere = "run the job on another node and stop what uses the GPU on this one (nvidia-smi on the host lists it); " +
		"if the GPUs are shared on purpose (MPS, time-slicing), set PREFLIGHT_IGNORE=gpu-in-use"
	var v verdict
	for _, g := range gpus {
		h := g.Health
		if g.MIGMode == "enabled" {
			continue
		}
		if h.ComputeMode == facts.ComputeModeProhibited {
			v.add(Error, true, gpuRef(g)+" is in compute mode prohibited: no CUDA context can be created on it",
				fmt.Sprintf("set GPU %d's compute mode back on the host (nvidia-smi -i %d -c DEFAULT), or run the job on another node", g.Index, g.Index))
		}
		busy := ""
		switch p := h.Processes; {
		case p != nil && p.Count > 0:
			busy = "already runs " + processList(p)
		case h.Memory != nil && h.Memory.UsedBytes >= heldBytes:
			busy = fmt.Sprintf("has %d MiB of %d MiB allocated", h.Memory.UsedBytes>>20, h.Memory.TotalBytes>>20)
			if p != nil {
				busy += " by no process of this PID namespace: another container's or the host's, which the driver does not list here"
			}
		}
		switch {
		case busy == "":
		case siblings != "":
			v.add(Info, false, fmt.Sprintf("%s %s, which may be this job's other ranks (%s)", gpuRef(g), busy, siblings),
				"nothing, if they are this job's ranks; otherwise stop them (nvidia-smi on the host lists them)")
		default:
			if h.ComputeMode == facts.ComputeModeExclusiveProcess || h.ComputeMode == facts.ComputeModeExclusiveThread {
				busy += fmt.Sprintf(", and its compute mode (%s) admits no second process", h.ComputeMode)
			}
			v.add(Error, true, gpuRef(g)+" "+busy, elsewhere)
		}
	}
	v.unread(gpus, "processes", "computeMode", "memory")
	return v.finding("no visible GPU runs another process or holds memory: " + answeredCount(gpus, "processes", func(h facts.GPUHealth) bool { return h.Processes != nil }))
}

func processList(p *facts.Processes) string {
	var s []string
	for _, q := range p.First {
		e := fmt.Sprintf("PID %d", q.PID)
		if q.UsedBytes > 0 {
			e += fmt.Sprintf(" (%d MiB)", q.UsedBytes>>20)
		}
		s = append(s, e)
	}
	if more := p.Count - len(p.First); more > 0 {
		s = append(s, fmt.Sprintf("%d more", more))
	}
	return fmt.Sprintf("%d compute process(es): %s", p.Count, strings.Join(s, ", "))
}
