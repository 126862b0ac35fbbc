package report

import (
	"strings"
	"testing"
)

func TestHumanBytes(t *testing.T) {
	tests := []struct {
		n    uint64
		want string
	}{
		{512, "512 B"}, {1024, "1 KiB"}, {64 << 20, "64 MiB"}, {85899345920, "80 GiB"}, {1536 << 20, "1.5 GiB"},
	}
	for _, tt := range tests {
		if got := humanBytes(tt.n); got != tt.want {
			t.Errorf("humanBytes(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

// Coloured statuses keep the checks table aligned: the escape codes are
// added after the columns are laid out.
func TestColouredTableIsAligned(t *testing.T) {
	plain := &humanWriter{}
	coloured := &humanWriter{color: true}
	rows := [][]string{{"STATUS", "CHECK", "MESSAGE"}, {"pass", "driver", "ok"}, {"error", "cuda-requirement", "bad"}, {"", "", "remedy: fix"}}
	plain.statusTable(rows)
	coloured.statusTable(rows)
	strip := strings.NewReplacer(red, "", yellow, "", green, "", reset, "")
	if got := strip.Replace(coloured.b.String()); got != plain.b.String() {
		t.Errorf("coloured table, escapes removed:\n%s\nplain:\n%s", got, plain.b.String())
	}
	if !strings.Contains(coloured.b.String(), "  "+red+"error"+reset+"   cuda-requirement  bad") {
		t.Errorf("status not coloured in place:\n%q", coloured.b.String())
	}
}
