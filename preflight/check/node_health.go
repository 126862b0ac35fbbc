package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// healthGPUs returns the visible GPUs with health facts, or the finding
// that skips a GPU health check.
func healthGPUs(in Input) ([]facts.GPU, *Finding) {
	if len(in.Visible) == 0 {
		return nil, &Finding{Status: Skip, Message: "no visible GPU"}
	}
	if o := in.Facts.Host.NVML.Outcome; o != facts.ProbeOK {
		return nil, &Finding{Status: Skip, Message: "needs NVML, which did not answer (" + orUnknown(o) + ")"}
	}
	var gpus []facts.GPU
	for _, g := range in.Visible {
		if g.Health != nil {
			gpus = append(gpus, g)
		}
	}
	if len(gpus) == 0 {
		return nil, &Finding{Status: Skip, Message: "the NVML probe reported no GPU health"}
	}
	return gpus, nil
}

func gpuRef(g facts.GPU) string { return fmt.Sprintf("GPU %d (%s)", g.Index, orUnknown(g.UUID)) }

// verdict gathers problems: the worst status, each remedy once.
type verdict struct {
	status    Status
	nodeFault bool
	problems  []string
	remedies  []string
}

func (v *verdict) add(s Status, nodeFault bool, problem, remedy string) {
	if s.Severity() > v.status.Severity() {
		v.status = s
	}
	v.nodeFault = v.nodeFault || nodeFault
	v.problems = append(v.problems, problem)
	if remedy != "" && !slices.Contains(v.remedies, remedy) {
		v.remedies = append(v.remedies, remedy)
	}
}

// unread adds, as info, the facts NVML failed to give.
func (v *verdict) unread(gpus []facts.GPU, keys ...string) {
	for _, g := range gpus {
		for _, k := range keys {
			if e, ok := g.Health.Errors[k]; ok {
				v.add(Info, false, fmt.Sprintf("%s: NVML could not read %s (%s)", gpuRef(g), k, e),
					"look at the GPU on the host: nvidia-smi -q -i "+fmt.Sprint(g.Index))
			}
		}
	}
}

func (v verdict) finding(pass string) Finding {
	if len(v.problems) == 0 {
		return Finding{Status: Pass, Message: pass}
	}
	return Finding{Status: v.status, NodeFault: v.nodeFault, Message: strings.Join(v.problems, "; "), Remedy: strings.Join(v.remedies, "; ")}
}

// answeredCount says how many of gpus answered key.
func answeredCount(gpus []facts.GPU, key string, has func(facts.GPUHealth) bool) string {
	n, unsupported := 0, 0
	for _, g := range gpus {
		switch {
		case has(*g.Health):
			n++
		case slices.Contains(g.Health.Unsupported, key):
			unsupported++
		}
	}
	s := fmt.Sprintf("%d of %d visible GPU(s) answered", n, len(gpus))
	if unsupported > 0 {
		s += fmt.Sprintf(", %d do not support it", unsupported)
	}
	return s
}
