package check

import (
	"github.com/gpu-preflight/gpu-preflight/preflight/transport"
)

// transportFinding is transport.Evaluate's verdict for check id on this
// rank's predicted NCCL network, with the job's shape and launcher read
// from the orchestrator facts (docs/transport.md).
func transportFinding(id string, in Input) Finding {
	t := in.Facts.Host.Transport
	switch {
	case t.Prediction.Summary == "":
		return Finding{Status: Skip, Message: "the network NCCL would use was not read"}
	case t.Image.NCCL == "" && id != transport.CheckP2P:
		return Finding{Status: Skip, Message: "no NCCL in the image: nothing uses the network"}
	}
	v := transport.Evaluate(id, t.Prediction, transport.JobOf(in.Facts.Orchestrator, in.Facts.Container))
	return Finding{Status: Status(v.Status), NodeFault: v.NodeFault, Message: v.Message, Remedy: v.Remedy}
}
