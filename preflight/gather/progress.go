package gather

import (
	"context"
	"sync"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/container"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
)

// Progress is how far one Gather got: the step it was in when its
// context's deadline passed, and the facts of the steps it finished
// before, so that a caller that stops waiting at the deadline
// (PREFLIGHT_TIMEOUT) records what was seen and names what was not. Safe
// for concurrent use; the zero value is ready, and a nil *Progress records
// nothing.
type Progress struct {
	mu sync.Mutex
	// step is the step under way; frozen once the deadline passed, so a
	// later step that Gather starts on its way out is not blamed.
	step     step
	frozen   bool
	finished bool
	host     facts.Host
	cont     facts.Container
	orch     facts.Orchestrator
}

// step is one stage of Gather, as a sentence's subject: "the NVML probe
// (libnvidia-ml.so.1)". reads says it reads files, so the path it last
// read says where it stood.
type step struct {
	what  string
	reads bool
}

// begin records the facts Gather has before its first step.
func (p *Progress) begin(o facts.Orchestrator) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.orch = o
}

// enter starts step s with the facts gathered so far, unless ctx's
// deadline has passed (the step under way then stays the one blamed).
func (p *Progress) enter(ctx context.Context, s step, h facts.Host, c facts.Container) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.frozen || ctx.Err() != nil {
		p.frozen = true
		return
	}
	p.step, p.host, p.cont = s, h, c
}

// finish marks Gather done: in time when ctx's deadline had not passed.
func (p *Progress) finish(ctx context.Context) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.frozen && ctx.Err() == nil {
		p.finished = true
	}
}

// Late reports whether Gather did not finish before its deadline, and if
// so, what had not finished ("the NVML probe (libnvidia-ml.so.1)", "the
// image scan under /mnt/image, reading /mnt/image/usr/lib/libcudnn.so.8")
// and the facts of the steps before it, with the GPUs they make visible.
func (p *Progress) Late() (pending string, partial Result, late bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.finished {
		return "", Result{}, false
	}
	pending = p.step.what
	if last := fsroot.LastPath(); p.step.reads && last != "" {
		pending += ", reading " + last
	}
	h, c := p.host, p.cont
	completeDriver(&h, time.Now())
	visible, _ := container.VisibleGPUs(h.GPUs, c.Env)
	return pending, Result{Facts: facts.Facts{Host: h, Container: c, Orchestrator: p.orch}, Visible: visible}, true
}
