// Package host gathers what the machine and its NVIDIA driver say from
// procfs, sysfs and /dev only; the caller runs the NVML probe and merges its
// answers over these. Every gatherer fails soft: a missing file is a fact
// (the zero value), any other failure a warning.
package host

import (
	"cmp"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
)

// maxTextFile bounds one procfs, sysfs or cgroup file; the largest is a few hundred bytes.
const maxTextFile = 64 << 10

// Gather reads the host facts under root; Driver.CUDAVersion and NVML are
// the caller's, from the NVML probe or the driver-branch table.
func Gather(root fsroot.Root) (facts.Host, []string) {
	var h facts.Host
	var warns []string
	add := func(w []string) { warns = append(warns, w...) }

	var w []string
	h.Driver, w = gatherDriver(root)
	add(w)
	h.GPUs, w = gatherGPUs(root)
	add(w)
	h.DeviceNodes, w = gatherDeviceNodes(root)
	add(w)
	h.Hostname, w = gatherHostname(root)
	add(w)
	h.Kernel, w = readLine(root, "/proc/sys/kernel/osrelease")
	add(w)
	h.ShmBytes, w = gatherShm(root)
	add(w)
	h.Cgroup, w = gatherCgroup(root)
	add(w)
	return h, warns
}

// DriverEvidence reports whether the host shows an NVIDIA driver: a procfs
// version, a /dev/nvidia* node or a GPU in procfs. The NVML probe is started
// only on evidence: it costs milliseconds for nothing on a machine without a GPU.
func DriverEvidence(h facts.Host) bool {
	return h.Driver.Version != "" || len(h.DeviceNodes) > 0 || len(h.GPUs) > 0
}

func gatherDriver(root fsroot.Root) (facts.Driver, []string) {
	d := facts.Driver{Source: facts.DriverFromNone}
	const p = "/proc/driver/nvidia/version"
	data, err := root.ReadFileMax(p, maxTextFile)
	if err != nil {
		if fsroot.Missing(err) {
			return d, nil
		}
		return d, []string{fmt.Sprintf("driver version: %v", err)}
	}
	v, open, err := ParseDriverVersion(data)
	if err != nil {
		return d, []string{fmt.Sprintf("driver version: %s: %v", p, err)}
	}
	d.Version, d.OpenKernelModule, d.Source = v, open, facts.DriverFromProcfs
	return d, nil
}

// gatherGPUs lists /proc/driver/nvidia/gpus/*/information, named by PCI
// address; an unreadable GPU is still listed, an excluded one left out with
// a warning. Index is the PCI bus order, which nvidia-smi and NVML use.
func gatherGPUs(root fsroot.Root) ([]facts.GPU, []string) {
	files, err := root.Glob("/proc/driver/nvidia/gpus/*/information")
	if err != nil {
		return nil, []string{fmt.Sprintf("gpus: %v", err)}
	}
	var gpus []facts.GPU
	var warns []string
	for _, f := range files {
		var g facts.GPU
		data, err := root.ReadFileMax(f, maxTextFile)
		if err == nil && Excluded(data) {
			warns = append(warns, fmt.Sprintf("gpu: %s: excluded by the driver (NVreg_ExcludedGpus); not counted", f))
			continue
		}
		if err == nil {
			g, err = ParseGPUInformation(data)
			if err != nil {
				err = fmt.Errorf("%s: %w", f, err)
			}
		}
		if err != nil {
			warns = append(warns, fmt.Sprintf("gpu: %v", err))
		}
		if g.PCIBusID == "" {
			dir := path.Base(path.Dir(f))
			if id, err := NormalizeBusID(dir); err == nil {
				g.PCIBusID = id
			} else {
				g.PCIBusID = dir
			}
		}
		gpus = append(gpus, g)
	}
	slices.SortStableFunc(gpus, func(a, b facts.GPU) int { return cmp.Compare(a.PCIBusID, b.PCIBusID) })
	for i := range gpus {
		gpus[i].Index = i
	}
	return gpus, warns
}

// gatherDeviceNodes lists /dev/nvidia* and the entries of /dev/nvidia*
// directories by name only: a test tree holds regular files there.
func gatherDeviceNodes(root fsroot.Root) ([]string, []string) {
	entries, err := root.ReadDir("/dev")
	if err != nil {
		if fsroot.Missing(err) {
			return nil, nil
		}
		return nil, []string{fmt.Sprintf("device nodes: %v", err)}
	}
	var nodes, warns []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "nvidia") {
			continue
		}
		p := "/dev/" + e.Name()
		if !e.IsDir() {
			nodes = append(nodes, p)
			continue
		}
		sub, err := root.ReadDir(p)
		if err != nil {
			warns = append(warns, fmt.Sprintf("device nodes: %v", err))
			continue
		}
		for _, s := range sub {
			nodes = append(nodes, p+"/"+s.Name())
		}
	}
	slices.Sort(nodes)
	return nodes, warns
}

func gatherHostname(root fsroot.Root) (string, []string) {
	name, warns := readLine(root, "/proc/sys/kernel/hostname")
	if name == "" && root.IsHost() {
		// Without procfs (a sandbox, a chroot) the kernel still answers
		// uname; under another root the machine's own name would be wrong.
		if n, err := os.Hostname(); err == nil {
			name = n
		}
	}
	return name, warns
}

func readLine(root fsroot.Root, p string) (string, []string) {
	data, err := root.ReadFileMax(p, maxTextFile)
	if err != nil {
		if fsroot.Missing(err) {
			return "", nil
		}
		return "", []string{err.Error()}
	}
	return strings.TrimSpace(string(data)), nil
}

// gatherShm measures /dev/shm under the root: Docker gives 64 MiB unless told
// otherwise, and DataLoader workers pass tensors through it.
func gatherShm(root fsroot.Root) (uint64, []string) {
	host, err := root.Resolve("/dev/shm")
	if err != nil {
		return 0, []string{fmt.Sprintf("shm: %v", err)}
	}
	var st unix.Statfs_t
	if err := unix.Statfs(host, &st); err != nil {
		if fsroot.Missing(err) {
			return 0, nil
		}
		return 0, []string{fmt.Sprintf("shm: statfs %s: %v", host, err)}
	}
	// f_blocks counts fragments of f_frsize bytes (statfs(2)); on tmpfs
	// f_frsize equals f_bsize, and older kernels leave f_frsize 0.
	unit := st.Frsize
	if unit <= 0 {
		unit = st.Bsize
	}
	return st.Blocks * uint64(unit), nil
}

func exists(root fsroot.Root, p string) bool {
	_, err := root.Stat(p)
	return err == nil
}
