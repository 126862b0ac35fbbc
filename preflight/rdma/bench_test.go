package rdma

import (
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/preflight/rdma/rdmatest"
)

// BenchmarkGatherHGX is one start's reads on the 8-GPU, 8-HCA node: sysfs,
// the uverbs nodes (real character devices as root), procfs, netlink, and
// the image's RDMA user space through the loader model.
//
//	go test ./preflight/rdma -run '^$' -bench GatherHGX -benchtime 200x
func BenchmarkGatherHGX(b *testing.B) {
	n := rdmatest.HGX(1, "InfiniBand", "400 Gb/sec (4X NDR)")
	n.Nodes = os.Geteuid() == 0
	n.Peermem = []string{"/sys/kernel/mm/memory_peers/nv_mem/version"}
	o := Options{Host: layout(b, n), Image: debianImage(b), GPUs: hgxGPUs(), NCCL: libdir + "/libnccl.so.2",
		NCCLVersion: "2.22.3", KernelRelease: "6.8.0-45-generic", DriverVersion: "550.90.07",
		Env: func(k string) (string, bool) { return map[string]string{"NCCL_IB_HCA": "mlx5"}[k], k == "NCCL_IB_HCA" }}
	// The machine's other load stretches the wall time; the CPU time the
	// process spent per read is reported beside it.
	var before, after unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &before)
	for b.Loop() {
		if f, warns := Gather(o); len(f.HCAs) != 8 || len(f.GPUs) != 8 || len(warns) > 0 {
			b.Fatalf("%d HCAs, %d GPUs, warnings %q", len(f.HCAs), len(f.GPUs), warns)
		}
	}
	unix.Getrusage(unix.RUSAGE_SELF, &after)
	cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}
