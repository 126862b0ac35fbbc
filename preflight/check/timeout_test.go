package check

import (
	"strings"
	"testing"
	"time"
)

// A preflight that misses PREFLIGHT_TIMEOUT is the node's fault (retry
// elsewhere), and its finding says what had not finished.
func TestTimedOutIsANodeFaultNamingWhatHadNotFinished(t *testing.T) {
	f := TimedOut(2*time.Second, "the NVML probe (libnvidia-ml.so.1)")
	if f.ID != TimeoutID || f.Status != Error || !f.NodeFault {
		t.Errorf("finding %+v: want id %s, an error, a node fault", f, TimeoutID)
	}
	for _, want := range []string{"PREFLIGHT_TIMEOUT=2s", "the NVML probe (libnvidia-ml.so.1) had not finished", "facts gathered before it"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message %q does not say %q", f.Message, want)
		}
	}
	if !strings.Contains(f.Remedy, "another node") {
		t.Errorf("remedy %q does not send the job to another node", f.Remedy)
	}
	if u := TimedOut(time.Second, ""); !u.NodeFault || strings.Contains(u.Message, "had not finished") {
		t.Errorf("without a pending step: %+v", u)
	}
}
