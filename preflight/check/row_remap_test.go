package check

import (
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

func TestRowRemap(t *testing.T) {
	tests := []struct {
		rule      string
		rows      *facts.RemappedRows
		status    Status
		nodeFault bool
		says      []string
	}{
		{"rows remapped and applied pass", &facts.RemappedRows{Correctable: 2, Uncorrectable: 1}, Pass, false, []string{"8 of 8"}},
		{"a pending remapping is a node fault fixed by a reset", &facts.RemappedRows{Uncorrectable: 1, Pending: true}, Error, true,
			[]string{"GPU 3", "pending", "nvidia-smi -r -i 3", "reboot"}},
		{"a failed remapping is a node fault fixed by draining", &facts.RemappedRows{Uncorrectable: 512, Failed: true}, Error, true,
			[]string{"GPU 3", "fail", "512", "drain", "replaced"}},
		{"a failure outranks a pending remapping", &facts.RemappedRows{Pending: true, Failed: true}, Error, true, []string{"drain"}},
		{"not supported (MIG on, pre-Ampere) is no finding", nil, Pass, false, []string{"7 of 8", "1 do not support it"}},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			in := dgxA100.node(8, 3, func(h *facts.GPUHealth) {
				h.RemappedRows = tt.rows
				if tt.rows == nil {
					h.Unsupported = append(h.Unsupported, "remappedRows")
				}
			})
			f := RowRemap.Run(in)
			if f.ID != "row-remap" || f.Status != tt.status || f.NodeFault != tt.nodeFault {
				t.Fatalf("%s %s nodeFault %v: %s", f.ID, f.Status, f.NodeFault, f.Message)
			}
			checkFindingText(t, f, tt.says)
		})
	}
}
