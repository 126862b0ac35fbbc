package transport

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/nccl"
)

// capIPCLock is CAP_IPC_LOCK's bit (linux/capability.h).
const capIPCLock = 14

// gdr predicts GPUDirect RDMA on the IB transport: nvidia_peermem as NCCL
// v probes for it, else DMA-BUF when its conditions hold, and then per GPU
// whether its nearest NIC is within NCCL_NET_GDR_LEVEL.
func (a *analysis) gdr() {
	present := func(f string) bool { return slices.Contains(a.f.Kernel.Peermem, f) }
	if slices.ContainsFunc(nccl.PeermemFiles(a.v), present) {
		a.pred.GDR = "peermem"
	} else if unmet, unsure := a.dmabufUnmet(); len(unmet) == 0 && unsure == "" {
		a.pred.GDR = "dmabuf"
	} else {
		const module = "/sys/module/nvidia_peermem/version"
		switch {
		case present(module) && !a.v.AtLeast(2, 23, 4):
			a.add("peermem-unseen", "nvidia_peermem is loaded (%s), but NCCL %s looks for it only under /sys/kernel/mm/memory_peers, which this kernel has not: GPUDirect RDMA stays off", module, a.v)
		case len(unmet) == 0:
			a.add("dmabuf-unconfirmed", "no nvidia_peermem; DMA-BUF's conditions hold but %s", unsure)
			return
		default:
			a.add("gdr-off", "GPUDirect RDMA is off: no nvidia_peermem (NCCL %s probes %s) and no DMA-BUF (%s); every transfer is staged through host memory",
				a.v, strings.Join(nccl.PeermemFiles(a.v), ", "), strings.Join(unmet, "; "))
		}
		return
	}
	a.gdrDistance()
	a.pred.Summary += ", GPUDirect RDMA through " + map[string]string{"peermem": "nvidia_peermem", "dmabuf": "DMA-BUF"}[a.pred.GDR]
}

// dmabufUnmet lists the conditions of NCCL's DMA-BUF registration that do
// not hold (docs/transport.md, "DMA-BUF"), and, when only the GPU's own
// support is unknown, says why.
func (a *analysis) dmabufUnmet() (unmet []string, unsure string) {
	if !a.v.HasDMABuf() {
		unmet = append(unmet, fmt.Sprintf("NCCL %s predates DMA-BUF (2.13.4)", a.v))
	}
	if nccl.Param(a.s, nccl.DMABufEnable, 1) == 0 {
		unmet = append(unmet, "NCCL_DMABUF_ENABLE=0")
	}
	if major, minor, ok := release(a.f.Kernel.Release); ok && (major < 5 || major == 5 && minor < 12) {
		unmet = append(unmet, "Linux "+a.f.Kernel.Release+" predates 5.12")
	}
	if abi := a.f.Image.VerbsABI; abi > 0 && abi < 12 {
		unmet = append(unmet, fmt.Sprintf("the image's libibverbs (ABI 1.%d) predates ibv_reg_dmabuf_mr (rdma-core 34)", abi))
	}
	if major, _, ok := release(a.f.Kernel.DriverVersion); ok && major < 515 {
		unmet = append(unmet, "driver "+a.f.Kernel.DriverVersion+" predates CUDA 11.7 (515)")
	}
	if !a.f.Kernel.OpenModule {
		unsure = "the NVIDIA kernel module is the proprietary one, whose GPUs may not report DMA-BUF support (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED); the open module does"
	}
	return unmet, unsure
}

// release reads the first two numbers of a version ("6.8.0-45-generic").
func release(s string) (major, minor int, ok bool) {
	a, rest, _ := strings.Cut(s, ".")
	b, _, _ := strings.Cut(rest, ".")
	b = strings.TrimRightFunc(b, func(r rune) bool { return r < '0' || r > '9' })
	major, err1 := strconv.Atoi(a)
	minor, err2 := strconv.Atoi(b)
	return major, minor, err1 == nil && err2 == nil
}

// gdrDistance reports the GPUs whose nearest IB device is farther than
// NCCL_NET_GDR_LEVEL (PXB by default): NCCL turns GPUDirect RDMA off for
// them (ncclTopoCheckGdr).
func (a *analysis) gdrDistance() {
	level, _ := nccl.GDRLevel(a.s, a.v)
	var far []string
	for _, g := range a.f.GPUs {
		best, via := nccl.PathSYS+1, ""
		for _, p := range a.ibPorts {
			if d := nccl.Distance(g.PCI, p.hca.PCI); d < best {
				best, via = d, p.hca.Name
			}
		}
		if via != "" && best > level {
			far = append(far, fmt.Sprintf("%s (nearest %s: %s)", g.Address, via, best))
		}
	}
	if len(far) > 0 {
		a.add("gdr-distance", "GPUDirect RDMA is off for GPUs farther from every NIC than NCCL_NET_GDR_LEVEL=%s allows: %s", level, list(far))
	}
}

// memlock reports a locked-memory limit the training command inherits
// with no CAP_IPC_LOCK to exceed it: registering NCCL's buffers fails
// ("ibv_reg_mr failed ... Cannot allocate memory").
func (a *analysis) memlock() {
	p := a.f.Process
	if p.MemlockSoft < 0 {
		return
	}
	// The command keeps CAP_IPC_LOCK across exec as root (from the bounding
	// set) or, for another user, only as an ambient capability.
	caps := p.CapAmb
	if p.UID == 0 {
		caps = p.CapBnd
	}
	if caps&(1<<capIPCLock) != 0 {
		return
	}
	a.add("memlock-limited", "RLIMIT_MEMLOCK is %s (hard %s) and the command will not have CAP_IPC_LOCK: NCCL cannot register its buffers with the HCA (\"ibv_reg_mr failed\")",
		size(p.MemlockSoft), size(p.MemlockHard))
}

func size(n int64) string {
	switch {
	case n < 0:
		return "unlimited"
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// p2p reports what breaks peer-to-peer traffic between this rank's GPUs:
// an IOMMU that translates their DMA, and CPUs remote from them.
func (a *analysis) p2p() {
	if len(a.f.GPUs) > 1 {
		var translated []string
		for _, g := range a.f.GPUs {
			if g.IOMMU == "DMA" || g.IOMMU == "DMA-FQ" {
				translated = append(translated, g.Address+" ("+g.IOMMU+")")
			}
		}
		if len(translated) > 0 {
			a.add("iommu-translated", "the IOMMU translates the DMA of %s: PCIe peer-to-peer between GPUs goes through the root complex, slowly or not at all (hangs, corrupt results)", list(translated))
		}
	}
	allowed, ok := ParseCPUList(a.f.Process.CPUs)
	if !ok || len(allowed) == 0 {
		return
	}
	var remote []string
	for _, g := range a.f.GPUs {
		if local, ok := ParseCPUList(g.LocalCPUs); ok && len(local) > 0 && !local.Meets(allowed) {
			remote = append(remote, g.Address)
		}
	}
	if len(remote) > 0 {
		a.add("numa-remote", "none of the CPUs this process may use (%s) is local to %s: NCCL's threads run across the socket link", a.f.Process.CPUs, list(remote))
	}
}
