package check

import (
	"fmt"
	"strings"
)

// RanksPerNode is the `ranks-per-node` check: no launcher starts more
// processes on this node than GPUs are visible, a mismatch; a count
// resting on an assumption warns (docs/node-health.md, "More ranks than
// GPUs").
var RanksPerNode = Check{ID: "ranks-per-node", rule: ranksPerNode}

func ranksPerNode(in Input) Finding {
	ranks := in.Facts.Container.Ranks
	n := len(in.Visible)
	switch {
	case len(ranks) == 0:
		return Finding{Status: Skip, Message: "no launcher states a per-node process count"}
	case n == 0:
		return Finding{Status: Skip, Message: "no visible GPU (gpu-count speaks for it)"}
	}
	var v verdict
	var ok []string
	for _, r := range ranks {
		said := fmt.Sprintf("%s %s", r.Launcher, r.Source)
		if r.PerNode <= n {
			ok = append(ok, fmt.Sprintf("%s: %d", said, r.PerNode))
			continue
		}
		status, because := Error, ""
		if r.Assumed != "" {
			status, because = Warn, " (assuming "+r.Assumed+")"
		}
		v.add(status, false, fmt.Sprintf("%s starts %d processes on this node%s, but %d GPU(s) are visible: ranks %d and up fail with \"CUDA error: invalid device ordinal\"",
			said, r.PerNode, because, n, n),
			fmt.Sprintf("start at most %d process(es) per node, or give the container %d GPUs (nvidia.com/gpu: %d) and check NVIDIA_VISIBLE_DEVICES/CUDA_VISIBLE_DEVICES", n, r.PerNode, r.PerNode))
	}
	return v.finding(fmt.Sprintf("%d GPU(s) visible for %s process(es) per node", n, strings.Join(ok, "; ")))
}
