package check

import "fmt"

// dockerDefaultShm is Docker's default /dev/shm, too small for DataLoader
// workers that pass batches through shared memory.
const dockerDefaultShm = 64 << 20

// Shm is the `shm` check: /dev/shm is larger than the 64 MiB default.
var Shm = Check{ID: "shm", rule: shm}

func shm(in Input) Finding {
	size := in.Facts.Host.ShmBytes
	f := Finding{}
	switch {
	case size == 0:
		f.Status = Skip
		f.Message = "/dev/shm size unknown (not mounted or not readable)"
	case size <= dockerDefaultShm:
		f.Status = Warn
		f.Message = fmt.Sprintf("/dev/shm is %s, the container runtime's default; DataLoader workers and NCCL can fail with 'No space left on device' or bus errors", mib(size))
		f.Remedy = "give the container more shared memory: docker run --ipc=host or --shm-size=16g; Kubernetes: mount an emptyDir with medium: Memory at /dev/shm"
	default:
		f.Status = Pass
		f.Message = fmt.Sprintf("/dev/shm is %s", mib(size))
	}
	return f
}

func mib(b uint64) string {
	if b >= 1<<30 && b%(1<<30) == 0 {
		return fmt.Sprintf("%d GiB", b>>30)
	}
	return fmt.Sprintf("%d MiB", b>>20)
}
