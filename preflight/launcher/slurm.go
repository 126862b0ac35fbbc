package launcher

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

const maxQuoted = 64 // the bytes of a tasks-per-node list a source quotes

// slurm is the tasks Slurm starts on this node: inside an srun step the
// step's layout at this node's place in the list, or the most any node runs
// when that place is unknown; outside a step --ntasks-per-node, else the
// job's layout as an assumption. None when each task is bound to GPUs of its
// own (docs/node-health.md).
func slurm(s facts.Slurm) []facts.Ranks {
	if s.GPUsPerTask != "" || s.NTasksPerGPU != "" {
		return nil
	}
	name, list := "SLURM_TASKS_PER_NODE", s.TasksPerNode
	inStep := s.StepID != "" && s.StepTasksPerNode != ""
	if inStep {
		name, list = "SLURM_STEP_TASKS_PER_NODE", s.StepTasksPerNode
	}
	r := facts.Ranks{Launcher: facts.LauncherSlurm}
	if !inStep {
		// A batch script is one process however many tasks the job holds;
		// only the steps it starts with srun run the job's layout.
		if s.NTasksPerNode != "" {
			r.Source = "SLURM_NTASKS_PER_NODE=" + s.NTasksPerNode
			return appendCount(nil, r, s.NTasksPerNode)
		}
		r.Assumed = "the job's layout runs here: outside an srun step this may be the batch script alone"
	}
	node, nodeErr := strconv.ParseUint(s.NodeID, 10, 64)
	counts, err := parseTasksPerNode(list, node)
	quoted := name + "=" + clip(list)
	switch {
	case err == nil && nodeErr == nil && node < counts.nodes:
		r.Source = quoted + ", SLURM_NODEID=" + strconv.FormatUint(node, 10)
		return appendCount(nil, r, strconv.Itoa(counts.at))
	case err != nil:
		return nil
	}
	r.Source = quoted
	if counts.least != counts.most {
		r.Assumed = fmt.Sprintf("the most tasks a node runs: SLURM_NODEID=%q does not place this node", clip(s.NodeID))
	}
	return appendCount(nil, r, strconv.Itoa(counts.most))
}

// taskCounts is a tasks-per-node list as read for one node.
type taskCounts struct {
	at          int    // the node's count; 0 past the list's end
	least, most int    // the smallest and largest counts
	nodes       uint64 // the nodes the list covers
}

var errTaskList = errors.New(`not a tasks-per-node list ("8(x2)", "2(x3),1")`)

// parseTasksPerNode reads Slurm's per-node counts, a run of equal ones written
// once as "count(xrepeats)" (src/common/env.c, uint16_array_to_str), in place.
func parseTasksPerNode(s string, node uint64) (taskCounts, error) {
	c := taskCounts{least: -1}
	if s == "" {
		return c, errTaskList
	}
	for item := range strings.SplitSeq(s, ",") {
		count, reps, ok := strings.Cut(item, "(x")
		n, err := strconv.ParseUint(count, 10, 16)
		if err != nil {
			return c, errTaskList
		}
		times := uint64(1)
		if ok {
			digits, closed := strings.CutSuffix(reps, ")")
			times, err = strconv.ParseUint(digits, 10, 32)
			if !closed || err != nil || times == 0 {
				return c, errTaskList
			}
		}
		if node >= c.nodes && node-c.nodes < times {
			c.at = int(n)
		}
		c.nodes += times
		c.most = max(c.most, int(n))
		if c.least < 0 || int(n) < c.least {
			c.least = int(n)
		}
	}
	return c, nil
}

func clip(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	return strings.ToValidUTF8(s[:maxQuoted], "") + "…"
}
