package check

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// GPUDegraded is the `gpu-degraded` check: no visible GPU's links or
// clocks run slower than its like's (docs/node-health.md).
var GPUDegraded = Check{ID: "gpu-degraded", rule: gpuDegraded}

func gpuDegraded(in Input) Finding {
	gpus, skip := healthGPUs(in)
	if skip != nil {
		return *skip
	}
	peers := map[string][]facts.GPU{}
	for _, g := range in.Facts.Host.GPUs {
		if g.Health != nil {
			peers[g.Name] = append(peers[g.Name], g)
		}
	}
	var v verdict
	capped := map[string][]string{}
	for _, g := range gpus {
		nvlinkDegraded(&v, g, peers[g.Name])
		if cap := pcieDegraded(&v, g, peers[g.Name]); cap != "" {
			capped[cap] = append(capped[cap], fmt.Sprint(g.Index))
		}
		if c := g.Health.ClockEvents; len(c) > 0 {
			v.add(Warn, true, fmt.Sprintf("%s's clocks are held down: %s", gpuRef(g), strings.Join(c, ", ")),
				fmt.Sprintf("look at the node's cooling and power (nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER -i %d); drain it if the slowdown stays", g.Index))
		}
	}
	for _, cap := range slices.Sorted(maps.Keys(capped)) {
		v.add(Info, false, fmt.Sprintf("GPU(s) %s: %s, as on every GPU of this model here: the server's slots, not a fault", strings.Join(capped[cap], ", "), cap),
			"nothing to fix here; nodes whose slots reach the GPU's generation move host data faster")
	}
	v.unread(gpus, "nvlink", "pcie.currentWidth", "pcie.maxWidth", "pcie.maxGeneration", "pcie.gpuMaxGeneration", "clockEvents")
	return v.finding(fmt.Sprintf("%d visible GPU(s): NVLinks as their peers', PCIe links at their maximum, no clock slowdown", len(gpus)))
}

// nvlinkDegraded warns when a same-model peer has more active NVLinks.
func nvlinkDegraded(v *verdict, g facts.GPU, peers []facts.GPU) {
	l := g.Health.NVLink
	if l == nil {
		return
	}
	best, compared := l.Active, 0
	for _, p := range peers {
		if p.Index != g.Index && p.Health.NVLink != nil {
			best = max(best, p.Health.NVLink.Active)
			compared++
		}
	}
	if l.Active < best {
		v.add(Warn, true, fmt.Sprintf("%s has %d NVLink(s) active (inactive: %s) where its %d peer(s) of model %s have up to %d",
			gpuRef(g), l.Active, ints(l.Inactive), compared, orUnknown(g.Name), best),
			fmt.Sprintf("drain the node and have GPU %d's NVLinks looked at (nvidia-smi nvlink -s -i %d); a GPU reset or reboot retrains them", g.Index, g.Index))
	}
}

// pcieDegraded warns when g's link is narrower than it can be or below a
// same-model peer's generation; it returns a cap all peers share.
func pcieDegraded(v *verdict, g facts.GPU, peers []facts.GPU) string {
	p := g.Health.PCIe
	if p == nil {
		return ""
	}
	remedy := fmt.Sprintf("reseat GPU %d or its riser and check the slot's link settings (lspci -vv -s %s: LnkCap against LnkSta); drain the node meanwhile", g.Index, orUnknown(g.PCIBusID))
	if p.CurrentWidth > 0 && p.CurrentWidth < p.MaxWidth {
		v.add(Warn, true, fmt.Sprintf("%s's PCIe link runs at x%d of the x%d it can reach", gpuRef(g), p.CurrentWidth, p.MaxWidth), remedy)
	}
	if p.MaxGeneration == 0 {
		return ""
	}
	best := p.MaxGeneration
	for _, q := range peers {
		if q.Health.PCIe != nil {
			best = max(best, q.Health.PCIe.MaxGeneration)
		}
	}
	supports := " where"
	if p.GPUMaxGeneration > 0 {
		supports = fmt.Sprintf(" where the GPU supports Gen%d and", p.GPUMaxGeneration)
	}
	switch {
	case best > p.MaxGeneration:
		v.add(Warn, true, fmt.Sprintf("%s's PCIe link reaches Gen%d%s a peer of model %s reaches Gen%d",
			gpuRef(g), p.MaxGeneration, supports, orUnknown(g.Name), best), remedy)
	case p.MaxGeneration < p.GPUMaxGeneration:
		return fmt.Sprintf("PCIe links reach Gen%d where the GPU (%s) supports Gen%d", p.MaxGeneration, orUnknown(g.Name), p.GPUMaxGeneration)
	}
	return ""
}

func ints(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
