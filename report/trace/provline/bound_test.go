package provline

import (
	"strings"
	"testing"
)

// TestTheCapsAndBudgetsAddUpToTheLine bounds the encoding from the caps
// and budgets themselves: under the tight caps (those a record that does
// not fit the others is reduced under), every value at its cap, every
// number at its longest, every list at half its budget.
func TestTheCapsAndBudgetsAddUpToTheLine(t *testing.T) {
	x := func(n int) string { return strings.Repeat("x", n) }
	t24 := func(n int) string { return x(min(n, capTight)) }
	const minInt = -2147483648
	r := Run{
		SchemaVersion: x(capShort), RunID: x(capVersion), StartedAt: x(capVersion), Tool: t24(capTool),
		Host: Host{Hostname: t24(capName),
			Driver:    Driver{Version: t24(capVersion), CUDAVersion: t24(capShort), OpenKernelModule: true, Branch: t24(capShort)},
			CUDA:      CUDA{Mode: t24(capShort), Outcome: t24(capShort), DriverAPIVersion: minInt},
			Transport: Transport{Network: t24(capName), LinkLayer: t24(capShort), Devices: t24(capText)}},
		Image: Image{CUDAVersion: t24(capShort), CUDAVersionFull: t24(capVersion), RequireDisabled: true,
			CuDNNVersion: t24(capVersion), NCCLVersion: t24(capVersion), TensorRTVersion: t24(capVersion),
			Ref: t24(capRef), Digest: x(capDigest), Revision: t24(capVersion)},
		Decision: Decision{Policy: t24(capShort), Action: t24(capShort), ExitCode: minInt, NodeFault: true},
		Command:  Command{Program: t24(capName), ArgvSHA256: x(capSHA), ArgvRecord: t24(capShort), ArgvDropped: minInt},
		Orchestrator: Orchestrator{JobID: t24(capName), JobIDSource: t24(capShort), Namespace: t24(capName), PodName: t24(capName),
			NodeName: t24(capName), CompletionIdx: t24(capShort), SlurmNodeName: t24(capName), SlurmProcID: t24(capShort),
			TorchrunRank: t24(capShort), PaddleTrainerID: t24(capShort), KubeflowJobID: t24(capName)},
		Outcome: &Outcome{ExitCode: minInt, Signal: minInt, NotStarted: x(capText)},
	}
	n := len(r.AppendJSON(nil))
	lists := map[string]int{"gpus": budgetGPUs, "requirements": budgetRequirements, "compat": budgetCompat,
		"frameworks": budgetFrameworks, "checks": budgetChecks, "blocking": budgetBlocking, "env": budgetEnv}
	for k, budget := range lists {
		n += len(`,"`+k+`":`) + budget/2
	}
	if n > MaxRecordBytes {
		t.Errorf("at every cap and budget a reduced record is %d bytes, over MaxRecordBytes %d", n, MaxRecordBytes)
	}
	t.Logf("at most %d bytes", n)
}
