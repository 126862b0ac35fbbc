package check

import (
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// rank is a rank whose image has NCCL, with the prediction's causes.
func rank(multiNode bool, causes ...string) Input {
	in := Input{}
	t := &in.Facts.Host.Transport
	t.Image.NCCL = "/usr/lib/x86_64-linux-gnu/libnccl.so.2"
	t.Prediction = facts.TransportPrediction{Network: facts.NetIB, Summary: "NET/IB on mlx5_0:1 (InfiniBand)"}
	for _, c := range causes {
		t.Prediction.Causes = append(t.Prediction.Causes, facts.TransportCause{Code: c, Message: c + " happened"})
	}
	if multiNode {
		in.Facts.Orchestrator.Slurm = facts.Slurm{JobID: "42", JobNumNodes: "4"}
	}
	return in
}

// Each check's severity comes from the cause's class and the job's shape:
// a multi-node job's fallback warns (strict blocks it), a setting naming
// what is missing is a mismatch, every port down a node fault; a
// single-node job gets no transport finding beyond gpu-p2p, but for a
// libibverbs that hangs: NCCL opens the HCAs for every communicator.
func TestTransportChecksTakeTheirSeverityFromTheCauseAndTheJob(t *testing.T) {
	noNCCL := rank(true)
	noNCCL.Facts.Host.Transport.Image.NCCL = ""
	tests := []struct {
		name      string
		check     Check
		in        Input
		status    Status
		nodeFault bool
		remedy    string
	}{
		{"healthy multi-node", NCCLTransport, rank(true), Pass, false, ""},
		{"fallback to sockets warns", NCCLTransport, rank(true, "rdma-device-not-passed"), Warn, false, "MELLANOX_VISIBLE_DEVICES"},
		{"a setting naming a missing HCA is a mismatch", NCCLTransport, rank(true, "ib-hca-unmatched"), Error, false, "NCCL_IB_HCA"},
		{"every port down is a node fault", NCCLTransport, rank(true, "ports-down", "port-down"), Error, true, "drain the node"},
		{"a spare port down is reported, not a fault", NCCLTransport, rank(true, "port-down"), Info, false, "spare"},
		{"single node: no transport finding", NCCLTransport, rank(false, "ports-down"), Skip, false, ""},
		{"single node: hung libibverbs stops every communicator", NCCLTransport, rank(false, "rdma-check-hung", "ports-down"), Error, true, "libibverbs hung"},
		{"single node: no GPUDirect finding", GPUDirectRDMA, rank(false, "gdr-off"), Skip, false, ""},
		{"GPUDirect off warns", GPUDirectRDMA, rank(true, "gdr-off"), Warn, false, "nvidia_peermem"},
		{"memlock warns", RDMAMemlock, rank(true, "memlock-limited"), Warn, false, "PropagateResourceLimitsExcept"},
		{"single node: no memlock finding", RDMAMemlock, rank(false, "memlock-limited"), Skip, false, ""},
		{"single node still gets P2P", GPUP2P, rank(false, "iommu-translated"), Warn, false, "iommu=pt"},
		{"no facts read", NCCLTransport, Input{}, Skip, false, ""},
		{"no NCCL in the image", NCCLTransport, noNCCL, Skip, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.check.Run(tt.in)
			if f.Status != tt.status || f.NodeFault != tt.nodeFault || !strings.Contains(f.Remedy, tt.remedy) {
				t.Errorf("%s: %s node fault %v, remedy %q; want %s, %v, %q\nmessage: %s", f.ID, f.Status, f.NodeFault, f.Remedy, tt.status, tt.nodeFault, tt.remedy, f.Message)
			}
		})
	}
}

// The remedy is the detected launcher's: Kubernetes when the pod says so.
func TestTransportRemedyIsTheLaunchers(t *testing.T) {
	in := rank(true, "rdma-device-not-passed")
	in.Facts.Orchestrator = facts.Orchestrator{Kubernetes: facts.Kubernetes{InCluster: true}, Torchrun: facts.Torchrun{NNodes: "2"}}
	if f := NCCLTransport.Run(in); !strings.Contains(f.Remedy, "resources.limits") {
		t.Errorf("remedy %q, want the Kubernetes one", f.Remedy)
	}
}
