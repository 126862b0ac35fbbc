package gather

import (
	"context"
	"sync"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/container"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
)

// Progress is how far one Gather got: the step under way at the deadline and
// the facts before it. Safe for concurrent use; a nil *Progress records nothing.
type Progress struct {
	mu sync.Mutex
	// step is frozen at the deadline: a step begun on the way out is not blamed.
	step     step
	frozen   bool
	finished bool
	host     facts.Host
	cont     facts.Container
	orch     facts.Orchestrator
}

// step is one stage of Gather as a sentence's subject; reads: it reads
// files, so the last path read says where it stood.
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

// enter starts step s with the facts so far, unless the deadline passed.
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

// Late reports whether Gather missed its deadline, what had not finished
// ("the image scan under /mnt/image, reading ...libcudnn.so.8") and the
// facts of the steps before it.
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
