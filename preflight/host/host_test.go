package host

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
)

// writeTree creates files under a new temporary root; a name ending in "/"
// makes an empty directory.
func writeTree(t *testing.T, files map[string]string) fsroot.Root {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return fsroot.Root(dir)
}

func information(model, uuid, bus string, minor string) string {
	s := "Model: \t\t " + model + "\nIRQ:   \t\t 95\n"
	if uuid != "" {
		s += "GPU UUID: \t " + uuid + "\n"
	}
	s += "Video BIOS: \t 92.00.45.00.07\nBus Type: \t PCIe\nDMA Size: \t 47 bits\nDMA Mask: \t 0x7fffffffffff\nBus Location: \t " + bus + "\n"
	if minor != "" {
		s += "Device Minor: \t " + minor + "\n"
	}
	return s + "GPU Excluded:\t No\n"
}

func TestGatherReadsAMachineWithTwoGPUs(t *testing.T) {
	root := writeTree(t, map[string]string{
		"proc/driver/nvidia/version": string(readTestdata(t, "version-550-open.txt")),
		// Listed out of bus order on purpose: Index follows the bus id.
		"proc/driver/nvidia/gpus/0000:db:00.0/information": information("NVIDIA A100-SXM4-80GB", "GPU-bbbbbbbb-0000-0000-0000-000000000002", "0000:db:00.0", "1"),
		"proc/driver/nvidia/gpus/0000:07:00.0/information": information("NVIDIA A100-SXM4-80GB", "GPU-aaaaaaaa-0000-0000-0000-000000000001", "0000:07:00.0", "0"),
		"proc/driver/nvidia/gpus/0000:07:00.0/power":       "Runtime D3 status:          Not supported\n",
		"dev/nvidiactl":                    "",
		"dev/nvidia0":                      "",
		"dev/nvidia1":                      "",
		"dev/nvidia-uvm":                   "",
		"dev/nvidia-caps/nvidia-cap1":      "",
		"dev/nvidia-caps/nvidia-cap2":      "",
		"dev/null":                         "",
		"dev/shm/":                         "",
		"proc/sys/kernel/hostname":         "trainer-0\n",
		"proc/sys/kernel/osrelease":        "5.15.0-91-generic\n",
		"proc/self/cgroup":                 "0::/\n",
		"sys/fs/cgroup/cgroup.controllers": "cpuset cpu io memory pids\n",
		"sys/fs/cgroup/memory.max":         "68719476736\n",
		"sys/fs/cgroup/cpu.max":            "800000 100000\n",
	})
	h, warns := Gather(root)
	if len(warns) != 0 {
		t.Errorf("warnings: %q", warns)
	}
	wantDriver := facts.Driver{Version: "550.54.15", Source: facts.DriverFromProcfs, OpenKernelModule: true}
	if h.Driver != wantDriver {
		t.Errorf("Driver = %+v, want %+v", h.Driver, wantDriver)
	}
	wantGPUs := []facts.GPU{
		{Index: 0, Name: "NVIDIA A100-SXM4-80GB", UUID: "GPU-aaaaaaaa-0000-0000-0000-000000000001", PCIBusID: "00000000:07:00.0"},
		{Index: 1, Name: "NVIDIA A100-SXM4-80GB", UUID: "GPU-bbbbbbbb-0000-0000-0000-000000000002", PCIBusID: "00000000:DB:00.0"},
	}
	if len(h.GPUs) != len(wantGPUs) {
		t.Fatalf("GPUs = %+v, want %+v", h.GPUs, wantGPUs)
	}
	for i := range wantGPUs {
		if !sameGPU(h.GPUs[i], wantGPUs[i]) {
			t.Errorf("GPU %d = %+v, want %+v", i, h.GPUs[i], wantGPUs[i])
		}
	}
	wantNodes := []string{"/dev/nvidia-caps/nvidia-cap1", "/dev/nvidia-caps/nvidia-cap2", "/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidia1", "/dev/nvidiactl"}
	if !slices.Equal(h.DeviceNodes, wantNodes) {
		t.Errorf("DeviceNodes = %q, want %q", h.DeviceNodes, wantNodes)
	}
	if h.Hostname != "trainer-0" || h.Kernel != "5.15.0-91-generic" {
		t.Errorf("Hostname, Kernel = %q, %q", h.Hostname, h.Kernel)
	}
	wantCg := facts.Cgroup{Version: 2, MemoryBytes: 64 << 30, CPUs: 8}
	if h.Cgroup != wantCg {
		t.Errorf("Cgroup = %+v, want %+v", h.Cgroup, wantCg)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(root.Path("/dev/shm"), &st); err != nil {
		t.Fatal(err)
	}
	if want := st.Blocks * uint64(st.Frsize); h.ShmBytes == 0 || h.ShmBytes != want {
		t.Errorf("ShmBytes = %d, want statfs's %d", h.ShmBytes, want)
	}
	if h.Driver.CUDAVersion != "" || h.NVML != (facts.NVML{}) {
		t.Errorf("Gather filled what the caller owns: CUDAVersion %q, NVML %+v", h.Driver.CUDAVersion, h.NVML)
	}
	if !DriverEvidence(h) {
		t.Error("DriverEvidence = false on a machine with a driver")
	}
}

func TestGatherOnAMachineWithoutDriverIsEmptyAndQuiet(t *testing.T) {
	root := writeTree(t, map[string]string{"dev/null": "", "proc/": ""})
	h, warns := Gather(root)
	if len(warns) != 0 {
		t.Errorf("warnings: %q", warns)
	}
	want := facts.Host{Driver: facts.Driver{Source: facts.DriverFromNone}}
	if h.Driver != want.Driver || h.GPUs != nil || h.DeviceNodes != nil || h.Hostname != "" ||
		h.Kernel != "" || h.ShmBytes != 0 || h.Cgroup != (facts.Cgroup{}) {
		t.Errorf("Gather on an empty root = %+v, want zero facts", h)
	}
	if DriverEvidence(h) {
		t.Error("DriverEvidence = true without a driver")
	}
}

func TestGatherWarnsOnUnreadableOrMalformedFiles(t *testing.T) {
	root := writeTree(t, map[string]string{
		// A directory where the version file belongs cannot be read.
		"proc/driver/nvidia/version/":                      "",
		"proc/driver/nvidia/gpus/0000:3b:00.0/information": "Model: \t\t Tesla T4\nBus Location: \t 0000:zz:00.0\n",
		"proc/driver/nvidia/gpus/0000:5e:00.0/information": "no fields at all\n",
		"proc/driver/nvidia/gpus/0000:86:00.0/information": strings.Replace(information("Tesla T4", "GPU-cccc", "0000:86:00.0", "2"), "GPU Excluded:\t No", "GPU Excluded:\t Yes", 1),
		"sys/fs/cgroup/cgroup.controllers":                 "",
		"sys/fs/cgroup/memory.max":                         "lots\n",
	})
	h, warns := Gather(root)
	joined := strings.Join(warns, "\n")
	for _, want := range []string{"driver version", `PCI bus id "0000:zz:00.0"`, "0000:5e:00.0/information", "memory.max", "0000:86:00.0/information: excluded"} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings %q do not mention %q", warns, want)
		}
	}
	if h.Driver.Version != "" || h.Driver.Source != facts.DriverFromNone {
		t.Errorf("Driver = %+v, want none", h.Driver)
	}
	// Both GPUs are still listed, the second by its directory's bus id; the
	// excluded one is not.
	if len(h.GPUs) != 2 || h.GPUs[0].Name != "Tesla T4" || h.GPUs[1].PCIBusID != "00000000:5E:00.0" {
		t.Errorf("GPUs = %+v", h.GPUs)
	}
	if h.Cgroup != (facts.Cgroup{Version: 2}) {
		t.Errorf("Cgroup = %+v, want version 2 without limits", h.Cgroup)
	}
}

func TestGatherCgroupV2TakesTheTightestAncestor(t *testing.T) {
	// Host cgroup namespace: the process's own cgroup is a path below the
	// mount; the pod's memory limit on the parent is tighter than the
	// container's own and looser ones further up, and the container's CPU
	// quota is tighter than the pod's.
	root := writeTree(t, map[string]string{
		"proc/self/cgroup":                           "0::/kubepods/pod1/ctr\n",
		"sys/fs/cgroup/cgroup.controllers":           "",
		"sys/fs/cgroup/kubepods/pod1/ctr/memory.max": "max\n",
		"sys/fs/cgroup/kubepods/pod1/ctr/cpu.max":    "400000 100000\n",
		"sys/fs/cgroup/kubepods/pod1/memory.max":     "34359738368\n",
		"sys/fs/cgroup/kubepods/pod1/cpu.max":        "800000 100000\n",
		"sys/fs/cgroup/kubepods/memory.max":          "68719476736\n",
		"sys/fs/cgroup/kubepods/cpu.max":             "max 100000\n",
	})
	cg, warns := gatherCgroup(root)
	want := facts.Cgroup{Version: 2, MemoryBytes: 32 << 30, CPUs: 4}
	if cg != want || len(warns) != 0 {
		t.Errorf("got %+v, %q; want %+v", cg, warns, want)
	}
}

func TestGatherCgroupV2UnlimitedIsZero(t *testing.T) {
	root := writeTree(t, map[string]string{
		"sys/fs/cgroup/cgroup.controllers": "",
		"sys/fs/cgroup/memory.max":         "max\n",
		"sys/fs/cgroup/cpu.max":            "max 100000\n",
	})
	cg, warns := gatherCgroup(root)
	if cg != (facts.Cgroup{Version: 2}) || len(warns) != 0 {
		t.Errorf("got %+v, %q", cg, warns)
	}
}

func TestGatherCgroupV1ReadsTheContainersMount(t *testing.T) {
	// Docker on cgroup v1 mounts the container's own cgroup at the top;
	// /proc/self/cgroup still names the host path, absent under the mount.
	// cpu is a link to the co-mounted cpu,cpuacct hierarchy.
	root := writeTree(t, map[string]string{
		"proc/self/cgroup":                            "12:cpu,cpuacct:/docker/abc\n11:memory:/docker/abc\n",
		"sys/fs/cgroup/memory/memory.limit_in_bytes":  "17179869184\n",
		"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us":  "150000\n",
		"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000\n",
	})
	if err := os.Symlink("cpu,cpuacct", filepath.Join(string(root), "sys/fs/cgroup/cpu")); err != nil {
		t.Fatal(err)
	}
	cg, warns := gatherCgroup(root)
	want := facts.Cgroup{Version: 1, MemoryBytes: 16 << 30, CPUs: 1.5}
	if cg != want || len(warns) != 0 {
		t.Errorf("got %+v, %q; want %+v", cg, warns, want)
	}
}

func TestGatherCgroupV1UnlimitedIsZero(t *testing.T) {
	root := writeTree(t, map[string]string{
		"sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",
		"sys/fs/cgroup/cpu/cpu.cfs_quota_us":         "-1\n",
		"sys/fs/cgroup/cpu/cpu.cfs_period_us":        "100000\n",
	})
	cg, warns := gatherCgroup(root)
	if cg != (facts.Cgroup{Version: 1}) || len(warns) != 0 {
		t.Errorf("got %+v, %q", cg, warns)
	}
}

func TestDriverEvidenceNeedsAVersionANodeOrAGPU(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    facts.Host
		want bool
	}{
		{"nothing", facts.Host{Driver: facts.Driver{Source: facts.DriverFromNone}}, false},
		{"procfs version", facts.Host{Driver: facts.Driver{Version: "535.129.03"}}, true},
		{"device node only", facts.Host{DeviceNodes: []string{"/dev/nvidiactl"}}, true},
		{"GPU listed only", facts.Host{GPUs: []facts.GPU{{PCIBusID: "00000000:3B:00.0"}}}, true},
		{"cgroup and shm are no evidence", facts.Host{ShmBytes: 1 << 26, Cgroup: facts.Cgroup{Version: 2}}, false},
	} {
		if got := DriverEvidence(tc.h); got != tc.want {
			t.Errorf("%s: DriverEvidence = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestHostnameFallsBackToTheKernelOnlyOnTheRealRoot(t *testing.T) {
	empty := writeTree(t, map[string]string{})
	if name, _ := gatherHostname(empty); name != "" {
		t.Errorf("under a prepared root without procfs, hostname = %q, want empty", name)
	}
	want, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	// On the real root procfs normally answers; either way the result must
	// be this machine's name.
	if name, _ := gatherHostname("/"); name != want {
		t.Errorf("on /, hostname = %q, want %q", name, want)
	}
}

// A FIFO where procfs has a file (planted in an image, or a hostile mount)
// is refused at once with a warning naming it; the other files are still
// read.
func TestGatherDoesNotBlockOnAFIFOWhereAFileBelongs(t *testing.T) {
	root := writeTree(t, map[string]string{
		"proc/driver/nvidia/gpus/0000:3b:00.0/information": information("Tesla T4", "GPU-aaaa", "0000:3b:00.0", "0"),
		"sys/fs/cgroup/cgroup.controllers":                 "",
		"sys/fs/cgroup/memory.max":                         "1073741824\n",
	})
	for _, p := range []string{"proc/driver/nvidia/version", "proc/self/cgroup", "proc/driver/nvidia/gpus/0000:5e:00.0/information"} {
		host := filepath.Join(string(root), p)
		if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mkfifo(host, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	var h facts.Host
	var warns []string
	go func() {
		defer close(done)
		h, warns = Gather(root)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("Gather blocked on a FIFO")
	}
	joined := strings.Join(warns, "\n")
	for _, p := range []string{"proc/driver/nvidia/version", "proc/self/cgroup", "0000:5e:00.0/information"} {
		if !strings.Contains(joined, p+": not a regular file (a FIFO)") {
			t.Errorf("warnings %q do not say %s is not a regular file", warns, p)
		}
	}
	// The GPU whose file is a FIFO is still listed, by its directory's bus id.
	if len(h.GPUs) != 2 || h.GPUs[0].Name != "Tesla T4" || h.GPUs[1].PCIBusID != "00000000:5E:00.0" || h.GPUs[1].Name != "" {
		t.Errorf("GPUs = %+v, want the T4 and the GPU at 5e:00.0 without details", h.GPUs)
	}
	if h.Cgroup.MemoryBytes != 1<<30 {
		t.Errorf("Cgroup = %+v, want the 1 GiB limit", h.Cgroup)
	}
}
