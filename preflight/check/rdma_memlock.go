package check

import "github.com/gpu-preflight/gpu-preflight/preflight/transport"

// RDMAMemlock is the `rdma-memlock` check: whether NCCL can register its buffers with the HCA (RLIMIT_MEMLOCK, CAP_IPC_LOCK).
var RDMAMemlock = Check{ID: transport.CheckMemlock, rule: rdmaMemlock}

func rdmaMemlock(in Input) Finding { return transportFinding(transport.CheckMemlock, in) }
