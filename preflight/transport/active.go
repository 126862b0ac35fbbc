package transport

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/nccl"
)

// Target is an HCA the active tier tests and the ports it queries.
type Target struct {
	HCA   string
	Ports []int
}

// String is the target as the probe takes it: "mlx5_0:1,2".
func (t Target) String() string {
	ports := make([]string, len(t.Ports))
	for i, p := range t.Ports {
		ports[i] = strconv.Itoa(p)
	}
	return t.HCA + ":" + strings.Join(ports, ",")
}

// ParseTarget reads Target.String's form.
func ParseTarget(s string) (Target, error) {
	name, ports, _ := strings.Cut(s, ":")
	t := Target{HCA: name}
	if name == "" || strings.ContainsAny(name, "/ ") {
		return t, fmt.Errorf("target %q: no HCA name", s)
	}
	for p := range strings.SplitSeq(ports, ",") {
		if p == "" {
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 255 {
			return t, fmt.Errorf("target %q: port %q is not 1 to 255", s, p)
		}
		t.Ports = append(t.Ports, n)
	}
	return t, nil
}

// Targets are the HCAs NCCL would try on this rank and their ports: those
// ncclIbInit looks at (InfiniBand or Ethernet, taken by NCCL_IB_HCA, up
// or down) unless NCCL_IB_DISABLE=1, and the EFA adapters a net plugin
// drives; of those, the ones whose uverbs node opens. A node that does not
// open is the passive tier's finding: rdma-core's open_cdev would wait
// for udev and report ENOENT whatever open(2) said. None without NCCL.
func Targets(f facts.Transport) []Target {
	if f.Image.NCCL == "" {
		return nil
	}
	v, _ := nccl.ParseVersion(f.NCCL.Version)
	hca, _ := f.NCCL.Settings.Get(nccl.IBHCA)
	filter := nccl.ParseList(hca, nccl.MaxHCAs, v)
	ib := nccl.Param(f.NCCL.Settings, nccl.IBDisable, 0) != 1
	var out []Target
	ports := 0
	for _, h := range f.HCAs {
		if h.Verbs == "" || h.Node.Open != facts.UverbsOK {
			continue
		}
		t := Target{HCA: h.Name}
		for _, p := range h.Ports {
			rdma := p.LinkLayer == facts.LinkInfiniBand || p.LinkLayer == facts.LinkEthernet
			if EFA(h) || ib && rdma && filter.Match(h.Name, p.Num) {
				t.Ports = append(t.Ports, p.Num)
			}
		}
		if len(t.Ports) > 0 && ports+len(t.Ports) <= nccl.MaxHCAs {
			out = append(out, t)
			ports += len(t.Ports)
		}
	}
	return out
}

// tested is what the active tier found of HCA h: ran is false when it
// did not test h; opened whether ibv_open_device succeeded; code and why
// the cause of its first failure ("" when none).
type tested struct {
	ran, opened bool
	code, why   string
}

// activeResult reads the active tier's result for h.
func (a *analysis) activeResult(h facts.HCA) tested {
	c := a.f.Active
	if c.Outcome != facts.RDMAOK && c.Outcome != facts.RDMAFailed {
		return tested{}
	}
	if c.List != nil && c.List.Failed() {
		code := "rdma-verbs-failed"
		if c.List.Errno == "ENOSYS" {
			code = "rdma-driver-not-loaded"
		}
		return tested{ran: true, code: code, why: stepWhy(*c.List)}
	}
	i := slices.IndexFunc(c.Devices, func(d facts.RDMADevice) bool { return d.Name == h.Name })
	if i < 0 {
		return tested{}
	}
	d := c.Devices[i]
	t := tested{ran: true, opened: slices.ContainsFunc(d.Steps, func(s facts.RDMAStep) bool {
		return s.Step == facts.RDMAStepOpen && !s.Failed()
	})}
	s := d.Failed()
	if s == nil {
		return t
	}
	t.code, t.why = "rdma-verbs-failed", stepWhy(*s)
	switch {
	case s.Step == facts.RDMAStepFind:
		t.code = "rdma-provider-missing"
	case s.Step == facts.RDMAStepOpen:
		t.code = openCauses[s.Errno]
		if t.code == "" {
			t.code = "rdma-verbs-failed"
		}
	case s.Step == facts.RDMAStepRegMR && s.Errno == "ENOMEM":
		t.code = "memlock-limited"
	}
	return t
}

// openCauses are the causes of ibv_open_device's errnos, those of
// open(2) on the uverbs node (rdma-core util/open_cdev.c).
var openCauses = map[string]string{
	"ENOENT": "rdma-device-not-passed",
	"EPERM":  "rdma-device-denied",
	"EACCES": "rdma-device-denied",
	"ENXIO":  "rdma-driver-not-loaded",
	"ENODEV": "rdma-driver-not-loaded",
}

func stepWhy(s facts.RDMAStep) string {
	why := s.Step
	if s.Errno != "" {
		why += ": " + s.Errno
	}
	if s.Message != "" {
		why += " (" + s.Message + ")"
	}
	return why
}

// active adds what the active tier found after a device opened (the
// memlock limit ibv_reg_mr hit, another call that failed), a library
// that did not load, a hung or missing probe; and says what it proved.
// A device that did not open is ib's, through opens and nodeCause.
func (a *analysis) active() {
	c := a.f.Active
	switch c.Outcome {
	case "", facts.RDMANotRun:
		return
	case facts.RDMATimeout:
		a.add("rdma-check-hung", "the RDMA active tier (PREFLIGHT_RDMA_CHECK=%s) hung in libibverbs: %s", c.Mode, c.Error)
		return
	case facts.RDMAUnavailable, facts.RDMAProbeFailed:
		a.add("rdma-check-unavailable", "the RDMA active tier did not run: %s", c.Error)
		return
	case facts.RDMALibraryFailed:
		if !a.has("libibverbs-missing") {
			a.add("libibverbs-missing", "the image's libibverbs does not load: %s", c.Error)
		}
		return
	}
	failed := map[string][]string{}
	var proved []string
	for _, h := range a.f.HCAs {
		switch t := a.activeResult(h); {
		case !t.ran, !t.opened:
		case t.code == "":
			proved = append(proved, h.Name)
		default:
			failed[t.code] = append(failed[t.code], h.Name+" ("+t.why+")")
		}
	}
	for _, code := range []string{"memlock-limited", "rdma-verbs-failed"} {
		if len(failed[code]) > 0 {
			a.add(code, "the RDMA active tier, through %s: %s", c.Library, list(failed[code]))
		}
	}
	if len(proved) > 0 {
		what := "opened, ports queried, a protection domain allocated"
		if c.Mode == facts.RDMAModeRegister {
			what = "opened, ports queried, 1 MiB registered"
		}
		a.pred.Proved = fmt.Sprintf("%s through %s: %s", what, c.Library, list(proved))
	}
}

func (a *analysis) has(code string) bool {
	return slices.ContainsFunc(a.pred.Causes, func(c facts.TransportCause) bool { return c.Code == code })
}
