package check

import "github.com/gpu-preflight/gpu-preflight/preflight/transport"

// GPUP2P is the `gpu-p2p` check: what breaks peer-to-peer traffic between this rank's GPUs (an IOMMU that translates, CPUs remote from the GPUs).
var GPUP2P = Check{ID: transport.CheckP2P, rule: gpuP2P}

func gpuP2P(in Input) Finding { return transportFinding(transport.CheckP2P, in) }
