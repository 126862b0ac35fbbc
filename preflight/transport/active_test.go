package transport

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// passed is the active tier's document for f's HCAs, each step ok;
// fail(name, step, errno) makes that step of that HCA fail.
func passed(f facts.Transport, mode string) facts.RDMACheck {
	c := facts.RDMACheck{Mode: mode, Outcome: facts.RDMAOK, Library: "/usr/lib/x86_64-linux-gnu/libibverbs.so.1", List: &facts.RDMAStep{Step: facts.RDMAStepList}}
	for _, t := range Targets(f) {
		d := facts.RDMADevice{Name: t.HCA}
		for _, s := range []string{facts.RDMAStepOpen, facts.RDMAStepPort, facts.RDMAStepPD, facts.RDMAStepRegMR, facts.RDMAStepDeregMR, facts.RDMAStepFreePD, facts.RDMAStepClose} {
			d.Steps = append(d.Steps, facts.RDMAStep{Step: s})
		}
		c.Devices = append(c.Devices, d)
	}
	return c
}

func fail(c *facts.RDMACheck, name, step, errno string) {
	c.Outcome = facts.RDMAFailed
	for i, d := range c.Devices {
		if d.Name != name {
			continue
		}
		j := slices.IndexFunc(d.Steps, func(s facts.RDMAStep) bool { return s.Step == step })
		c.Devices[i].Steps = append(d.Steps[:j:j], facts.RDMAStep{Step: step, Errno: errno, Message: "as libibverbs said"})
	}
}

// The HCAs the tier tests are the ones NCCL would try, read with NCCL's
// grammar for NCCL_IB_HCA: a prefix, "=" for exact names, "^" to exclude,
// ":port"; and only those whose uverbs node opens (rdma-core would wait
// for udev on the others and report ENOENT whatever open said).
func TestTargetsAreWhatNCCLWouldOpen(t *testing.T) {
	sixteen := func() facts.Transport {
		f := hgx()
		for i := 8; i < 16; i++ {
			h := f.HCAs[i-8]
			h.Name = fmt.Sprintf("mlx5_%d", i)
			f.HCAs = append(f.HCAs, h)
		}
		return f
	}
	names := func(ts []Target) string {
		var out []string
		for _, t := range ts {
			out = append(out, t.String())
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		hca, want string
	}{
		{"", "mlx5_0:1 mlx5_1:1 mlx5_2:1 mlx5_3:1 mlx5_4:1 mlx5_5:1 mlx5_6:1 mlx5_7:1 mlx5_8:1 mlx5_9:1 mlx5_10:1 mlx5_11:1 mlx5_12:1 mlx5_13:1 mlx5_14:1 mlx5_15:1"},
		{"mlx5_1", "mlx5_1:1 mlx5_10:1 mlx5_11:1 mlx5_12:1 mlx5_13:1 mlx5_14:1 mlx5_15:1"},
		{"=mlx5_1", "mlx5_1:1"},
		{"=mlx5_0:1,mlx5_2:2", "mlx5_0:1"},
		{"^mlx5_1", "mlx5_0:1 mlx5_2:1 mlx5_3:1 mlx5_4:1 mlx5_5:1 mlx5_6:1 mlx5_7:1 mlx5_8:1 mlx5_9:1"},
		{"^=mlx5_1,mlx5_2", "mlx5_0:1 mlx5_3:1 mlx5_4:1 mlx5_5:1 mlx5_6:1 mlx5_7:1 mlx5_8:1 mlx5_9:1 mlx5_10:1 mlx5_11:1 mlx5_12:1 mlx5_13:1 mlx5_14:1 mlx5_15:1"},
		{"^", ""},
	} {
		f := sixteen()
		if tc.hca != "" {
			set(&f, "NCCL_IB_HCA", tc.hca)
		}
		if got := names(Targets(f)); got != tc.want {
			t.Errorf("NCCL_IB_HCA=%q: %q\nwant %q", tc.hca, got, tc.want)
		}
	}
	f := hgx()
	f.HCAs[2].Node.Open, f.HCAs[5].Verbs = "ENXIO", ""
	if got := names(Targets(f)); strings.Contains(got, "mlx5_2") || strings.Contains(got, "mlx5_5") || !strings.Contains(got, "mlx5_7:1") {
		t.Errorf("targets with mlx5_2's node ENXIO and mlx5_5 without uverbs: %s", got)
	}
	set(&f, "NCCL_IB_DISABLE", "1")
	if got := Targets(f); len(got) != 0 {
		t.Errorf("NCCL_IB_DISABLE=1 still tests %v", got)
	}
	f = hgx()
	f.Image.NCCL = ""
	if got := Targets(f); len(got) != 0 {
		t.Errorf("an image without NCCL still tests %v", got)
	}
}

func TestTargetStringRoundTrips(t *testing.T) {
	for _, s := range []string{"mlx5_0:1", "mlx5_1:1,2", "efa0:1"} {
		got, err := ParseTarget(s)
		if err != nil || got.String() != s {
			t.Errorf("ParseTarget(%q) = %+v, %v", s, got, err)
		}
	}
	for _, s := range []string{":1", "mlx5_0:0", "mlx5_0:x", "mlx5_0:256", "a/b:1"} {
		if _, err := ParseTarget(s); err == nil {
			t.Errorf("ParseTarget(%q) accepted it", s)
		}
	}
}

func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"mlx5_0:1", "mlx5_1:1,2", "efa0:1", "mlx5_0:", "=mlx5_0:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseTarget(s)
		if err != nil {
			return
		}
		again, err := ParseTarget(got.String())
		if err != nil || again.String() != got.String() {
			t.Fatalf("%q read as %+v, which reads back as %+v, %v", s, got, again, err)
		}
	})
}

// What the image's libibverbs answered decides over what sysfs and the
// uverbs node said, and becomes the cause of its class: a device that
// does not open is left out, so NCCL falls back; ENOMEM from ibv_reg_mr
// is the memlock limit; a hang is a node fault; success is proved.
func TestActiveTierAnswersBecomeCauses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		active  func(f facts.Transport) facts.RDMACheck
		check   string
		status  string
		code    string
		network string
		says    string
	}{
		{"every HCA passes", func(f facts.Transport) facts.RDMACheck { return passed(f, facts.RDMAModeRegister) },
			CheckTransport, StatusPass, "", facts.NetIB, "opened, ports queried, 1 MiB registered through /usr/lib/x86_64-linux-gnu/libibverbs.so.1: mlx5_0,"},
		{"EPERM from ibv_open_device on every HCA", func(f facts.Transport) facts.RDMACheck {
			c := passed(f, facts.RDMAModeOpen)
			for _, d := range c.Devices {
				fail(&c, d.Name, facts.RDMAStepOpen, "EPERM")
			}
			return c
		}, CheckTransport, StatusWarn, "rdma-device-denied", facts.NetSocket, "mlx5_0 (ibv_open_device: EPERM (as libibverbs said))"},
		{"EPERM on one HCA: NCCL uses the others", func(f facts.Transport) facts.RDMACheck {
			c := passed(f, facts.RDMAModeOpen)
			fail(&c, "mlx5_4", facts.RDMAStepOpen, "EPERM")
			return c
		}, CheckTransport, StatusWarn, "rdma-device-denied", facts.NetIB, "mlx5_4 (ibv_open_device: EPERM"},
		{"ENOMEM from ibv_reg_mr", func(f facts.Transport) facts.RDMACheck {
			c := passed(f, facts.RDMAModeRegister)
			fail(&c, "mlx5_0", facts.RDMAStepRegMR, "ENOMEM")
			return c
		}, CheckMemlock, StatusWarn, "memlock-limited", facts.NetIB, "mlx5_0 (ibv_reg_mr: ENOMEM"},
		{"EINVAL from ibv_alloc_pd", func(f facts.Transport) facts.RDMACheck {
			c := passed(f, facts.RDMAModeOpen)
			fail(&c, "mlx5_1", facts.RDMAStepPD, "EINVAL")
			return c
		}, CheckTransport, StatusWarn, "rdma-verbs-failed", facts.NetIB, "mlx5_1 (ibv_alloc_pd: EINVAL"},
		{"no uverbs at all: ENOSYS", func(f facts.Transport) facts.RDMACheck {
			c := passed(f, facts.RDMAModeOpen)
			c.Outcome, c.Devices, c.List = facts.RDMAFailed, nil, &facts.RDMAStep{Step: facts.RDMAStepList, Errno: "ENOSYS", Message: "function not implemented"}
			return c
		}, CheckTransport, StatusWarn, "rdma-driver-not-loaded", facts.NetSocket, "ibv_get_device_list: ENOSYS"},
		{"a device libibverbs does not list", func(f facts.Transport) facts.RDMACheck {
			c := passed(f, facts.RDMAModeOpen)
			c.Outcome = facts.RDMAFailed
			c.Devices[0].Steps = []facts.RDMAStep{{Step: facts.RDMAStepFind, Message: "libibverbs does not list it"}}
			return c
		}, CheckTransport, StatusWarn, "rdma-provider-missing", facts.NetIB, "mlx5_0 (find (libibverbs does not list it))"},
		{"libibverbs does not load", func(f facts.Transport) facts.RDMACheck {
			return facts.RDMACheck{Mode: facts.RDMAModeOpen, Outcome: facts.RDMALibraryFailed, Error: "libnl-3.so.200: cannot open shared object file"}
		}, CheckTransport, StatusWarn, "libibverbs-missing", facts.NetIB, "libnl-3.so.200"},
		{"a hang", func(f facts.Transport) facts.RDMACheck {
			return facts.RDMACheck{Mode: facts.RDMAModeOpen, Outcome: facts.RDMATimeout, Error: "no answer within PREFLIGHT_RDMA_TIMEOUT=10s"}
		}, CheckTransport, StatusError, "rdma-check-hung", facts.NetIB, "PREFLIGHT_RDMA_TIMEOUT=10s"},
		{"no probe", func(f facts.Transport) facts.RDMACheck {
			return facts.RDMACheck{Mode: facts.RDMAModeOpen, Outcome: facts.RDMAUnavailable, Error: "no probe could be started"}
		}, CheckTransport, StatusInfo, "rdma-check-unavailable", facts.NetIB, "no probe could be started"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := hgx()
			f.Active = tc.active(f)
			pred := Predict(f)
			v := Evaluate(tc.check, pred, multiNode)
			if pred.Network != tc.network || v.Status != tc.status || (tc.code != "" && !slices.Contains(v.Codes, tc.code)) || !strings.Contains(v.Message, tc.says) {
				t.Errorf("network %q, %s %s %v: %s", pred.Network, tc.check, v.Status, v.Codes, v.Message)
			}
			if tc.code != "" && v.Remedy == "" {
				t.Errorf("%s has no remedy", tc.code)
			}
			if tc.status == StatusError && tc.code == "rdma-check-hung" && !v.NodeFault {
				t.Errorf("a hung libibverbs is not a node fault: %+v", v)
			}
		})
	}
}

// Every cause an answer of the tier maps to is a row of Causes.
func TestActiveCodesAreCauses(t *testing.T) {
	for _, code := range append(slices.Collect(func(yield func(string) bool) {
		for _, c := range openCauses {
			if !yield(c) {
				return
			}
		}
	}), "rdma-verbs-failed", "memlock-limited", "rdma-provider-missing") {
		if _, ok := Causes()[code]; !ok {
			t.Errorf("%s is not a cause", code)
		}
	}
}

// TestOnOneNodeOnlyACauseThatStopsEveryJobSpeaks: a libibverbs that hangs
// stops a job on one node (NCCL initialises its network for every
// communicator); links that are down do not, since no traffic leaves it.
func TestOnOneNodeOnlyACauseThatStopsEveryJobSpeaks(t *testing.T) {
	pred := facts.TransportPrediction{Summary: "NET/IB", Causes: []facts.TransportCause{
		{Code: "ports-down", Message: "every port is down"}, {Code: "rdma-check-hung", Message: "it hung"}}}
	v := Evaluate(CheckTransport, pred, Job{})
	if v.Status != StatusError || !v.NodeFault || !slices.Equal(v.Codes, []string{"rdma-check-hung"}) || strings.Contains(v.Message, "down") {
		t.Errorf("one node: %+v", v)
	}
	pred.Causes = pred.Causes[:1]
	if v := Evaluate(CheckTransport, pred, Job{}); v.Status != StatusSkip {
		t.Errorf("one node, links down: %+v", v)
	}
	if v := Evaluate(CheckTransport, pred, Job{MultiNode: true}); v.Status != StatusError || !v.NodeFault {
		t.Errorf("two nodes, links down: %+v", v)
	}
}
