// Package rdma gathers what one rank sees of the network NCCL may use,
// from its own namespaces: the HCAs and their ports in sysfs, whether
// their /dev/infiniband nodes open, its own locked-memory limit and
// capabilities, the interfaces of its network namespace, the image's
// libibverbs, providers and NCCL net plugins as the loader model finds
// them, GPUDirect RDMA's kernel side, the PCI placement of GPUs and HCAs,
// and NCCL's settings. It returns facts.Transport; a missing file is a
// fact, and any other failure a warning. Everything under /sys, /dev and
// /proc is read under the host root, the image's files under the image
// root; the interfaces come from netlink, which is this process's own
// namespace whatever the roots.
package rdma

import (
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
	"github.com/gpu-preflight/gpu-preflight/preflight/nccl"
)

// Options are what the gatherer takes from the run's other facts.
type Options struct {
	// Host is PREFLIGHT_HOST_ROOT, Image PREFLIGHT_ROOT.
	Host, Image fsroot.Root
	// Env is the container's environment.
	Env nccl.Lookup
	// GPUs are the PCI bus ids of the visible GPUs, in any form NVML or
	// procfs gives them.
	GPUs []string
	// NCCL is the libnccl.so.2 the image's framework loads (a path in the
	// image, "" for none) and NCCLVersion its release.
	NCCL, NCCLVersion string
	// KernelRelease, DriverVersion and OpenModule are the host facts of
	// the same names.
	KernelRelease, DriverVersion string
	OpenModule                   bool
}

// maxFile bounds one sysfs, procfs or configuration file read; the
// largest real one here (/proc/self/status) is under 2 KiB.
const maxFile = 64 << 10

// Gather reads the facts; the warnings say what could not be read.
func Gather(o Options) (facts.Transport, []string) {
	if o.Env == nil {
		o.Env = func(string) (string, bool) { return "", false }
	}
	g := gatherer{o: o, host: o.Host, image: o.Image}
	var f facts.Transport
	f.Process = g.process()
	f.HCAs = g.hcas()
	f.Links, f.Addresses = g.interfaces()
	f.GPUs = g.gpus()
	f.Kernel = g.kernel()
	f.NCCL = g.ncclSettings(f.Process.UID)
	f.Image = g.imageSide(f.HCAs, f.NCCL)
	return f, g.warns
}

type gatherer struct {
	o           Options
	host, image fsroot.Root
	warns       []string
	// switches are the PCI ids read, by switch directory; groups is
	// /sys/kernel/iommu_groups, resolved.
	switches map[string]uint64
	groups   string
}

func (g *gatherer) warn(err error) {
	if err != nil && !fsroot.Missing(err) {
		g.warns = append(g.warns, "rdma: "+err.Error())
	}
}
