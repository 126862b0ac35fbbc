package check

import "github.com/gpu-preflight/gpu-preflight/preflight/transport"

// NCCLTransport is the `nccl-transport` check: the network NCCL will use between nodes (InfiniBand, RoCE, a net plugin or TCP sockets) and why it would fall back or fail.
var NCCLTransport = Check{ID: transport.CheckTransport, rule: ncclTransport}

func ncclTransport(in Input) Finding { return transportFinding(transport.CheckTransport, in) }
