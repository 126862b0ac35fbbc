package gather

import (
	"context"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
)

// The step under way when the deadline passed is the one blamed, with the
// facts of the steps before it; a step Gather starts on its way out after
// the deadline changes nothing.
func TestProgressBlamesTheStepUnderWayAtTheDeadline(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var p Progress
	seen := facts.Host{Driver: facts.Driver{Version: "535.161.08"}}
	p.enter(ctx, step{"reading the host", true}, facts.Host{}, facts.Container{})
	p.enter(ctx, step{"the NVML probe (libnvidia-ml.so.1)", false}, seen, facts.Container{})
	cancel()
	p.enter(ctx, step{"the image scan under /", true}, facts.Host{}, facts.Container{})
	p.finish(ctx)
	pending, partial, late := p.Late()
	if !late || pending != "the NVML probe (libnvidia-ml.so.1)" {
		t.Errorf("Late() = %q, %v; want the NVML probe, late", pending, late)
	}
	if d := partial.Facts.Host.Driver; d.Version != "535.161.08" || d.Source != "procfs" || d.CUDAVersion != "12.2" {
		t.Errorf("the driver seen before the deadline: %+v", d)
	}
}

// A step that reads files names the last path it asked for.
func TestProgressNamesThePathAStepWasReading(t *testing.T) {
	var p Progress
	p.enter(context.Background(), step{"the image scan under /x", true}, facts.Host{}, facts.Container{})
	fsroot.Root(t.TempDir()).Stat("/usr/lib/libcudnn.so.9")
	if pending, _, _ := p.Late(); !strings.HasPrefix(pending, "the image scan under /x, reading ") || !strings.HasSuffix(pending, "/usr/lib/libcudnn.so.9") {
		t.Errorf("pending %q does not name the path", pending)
	}
}

// A Gather that finished in time is not late.
func TestProgressOfAFinishedGatherIsNotLate(t *testing.T) {
	var p Progress
	p.enter(context.Background(), step{"the image scan under /", true}, facts.Host{}, facts.Container{})
	p.finish(context.Background())
	if _, _, late := p.Late(); late {
		t.Error("late after finishing in time")
	}
}
