package transport

import (
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"slices"
	"strings"
)

// Statuses, as preflight/check spells them.
const (
	StatusPass  = "pass"
	StatusSkip  = "skip"
	StatusInfo  = "info"
	StatusWarn  = "warn"
	StatusError = "error"
)

// Verdict is one check's finding: what preflight/check's Finding holds.
type Verdict struct {
	Check     string
	Status    string
	NodeFault bool
	Message   string
	Remedy    string
	// Codes are the causes behind it, worst first.
	Codes []string
}

// Checks are the checks the causes belong to, in the order they report.
var Checks = []string{CheckTransport, CheckGPUDirect, CheckMemlock, CheckP2P}

// Evaluate is check's verdict on the prediction for job. A job on one node
// needs no network: only CheckP2P and the causes that stop every job speak
// then.
func Evaluate(check string, pred facts.TransportPrediction, job Job) Verdict {
	v := Verdict{Check: check, Status: StatusPass}
	oneNode := check != CheckP2P && !job.MultiNode
	var worst Class = -1
	var msgs, remedies []string
	for _, f := range pred.Causes {
		c := Causes()[f.Code]
		if c.Check != check || oneNode && !c.EveryJob {
			continue
		}
		if c.Class > worst {
			worst = c.Class
			v.Codes = append([]string{f.Code}, v.Codes...)
		} else {
			v.Codes = append(v.Codes, f.Code)
		}
		msgs = append(msgs, f.Message)
		if r := c.RemedyFor(job.Launcher); r != "" && !slices.Contains(remedies, r) {
			remedies = append(remedies, r)
		}
	}
	if worst == -1 && oneNode {
		v.Status, v.Message = StatusSkip, "a single-node job uses no network transport (prediction: "+pred.Summary+")"
		return v
	}
	switch worst {
	case -1:
		v.Message = passMessage(check, pred, job)
		return v
	case Informational:
		v.Status = StatusInfo
	case Slower, Fails:
		v.Status = StatusWarn
	case Mismatch:
		v.Status = StatusError
	case NodeFault:
		v.Status, v.NodeFault = StatusError, true
	}
	v.Message = strings.Join(msgs, "; ")
	if check == CheckTransport && pred.Summary != "" {
		v.Message += " (prediction: " + pred.Summary + ")"
	}
	v.Remedy = strings.Join(remedies, "; ")
	return v
}

func passMessage(check string, pred facts.TransportPrediction, job Job) string {
	switch check {
	case CheckTransport:
		if pred.Proved != "" {
			return pred.Summary + "; " + pred.Proved + " (" + job.Evidence + ")"
		}
		return pred.Summary + " (" + job.Evidence + ")"
	case CheckGPUDirect:
		switch pred.Network {
		case facts.NetIB:
			return "GPUDirect RDMA through " + pred.GDR + " for every GPU"
		case "", facts.NetSocket:
			return "no RDMA network, no GPUDirect RDMA (" + pred.Summary + ")"
		}
		return "the net plugin decides GPUDirect RDMA itself (" + pred.Summary + ")"
	case CheckMemlock:
		if pred.Network == "" || pred.Network == facts.NetSocket {
			return "NCCL registers no memory with an HCA (" + pred.Summary + ")"
		}
		return "locked memory is unlimited, or CAP_IPC_LOCK lifts the limit"
	}
	return "nothing breaks peer-to-peer traffic between the GPUs that this rank can see"
}
