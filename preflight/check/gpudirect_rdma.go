package check

import "github.com/gpu-preflight/gpu-preflight/preflight/transport"

// GPUDirectRDMA is the `gpudirect-rdma` check: whether NCCL will move GPU memory straight to the NIC (nvidia_peermem or DMA-BUF, within NCCL_NET_GDR_LEVEL of a NIC).
var GPUDirectRDMA = Check{ID: transport.CheckGPUDirect, rule: gpuDirectRDMA}

func gpuDirectRDMA(in Input) Finding { return transportFinding(transport.CheckGPUDirect, in) }
