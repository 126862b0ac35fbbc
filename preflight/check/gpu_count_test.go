package check

import (
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// A host with no driver at all is not told that no GPU is visible to the
// container: there is nothing to make visible.
func TestGPUCountWithoutADriverSaysSo(t *testing.T) {
	f := GPUCount.Run(Input{})
	if f.Status != Info || !strings.Contains(f.Message, "no NVIDIA driver on this host") || strings.Contains(f.Message, "visible") {
		t.Errorf("no driver: %s %q", f.Status, f.Message)
	}
	withDriver := GPUCount.Run(Input{Facts: facts.Facts{Host: facts.Host{DeviceNodes: []string{"/dev/nvidiactl"}}}})
	if withDriver.Status != Warn || !strings.Contains(withDriver.Message, "no GPU visible to this container") {
		t.Errorf("a driver, no visible GPU: %s %q", withDriver.Status, withDriver.Message)
	}
}
