package check_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/decision"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/policy"
)

// The cuda-requirement check's remedies, each applied as its text says,
// and the check seen to pass (or the run to go on) afterwards; a remedy
// that would not work must not be offered.
func TestRequirementRemediesWork(t *testing.T) {
	p100 := facts.GPU{Index: 0, Name: "Tesla P100-PCIE-16GB", Brand: "Tesla", ComputeCapability: "6.0"}
	v100 := p100
	v100.Name, v100.ComputeCapability = "Tesla V100-SXM2-16GB", "7.0"
	host := func(driver, cuda string, gpus ...facts.GPU) check.Input {
		return check.Input{Facts: facts.Facts{Host: facts.Host{
			Driver: facts.Driver{Version: driver, CUDAVersion: cuda, Source: "procfs"}, GPUs: gpus}}, Visible: gpus}
	}
	run := func(in check.Input) check.Finding { return check.CUDARequirement.Run(in) }
	blocks := func(in check.Input, ignore string) bool {
		fs := policy.Ignore([]check.Finding{run(in)}, policy.ParseList(ignore))
		return policy.Decide(policy.Fail, fs, policy.ExitCodes{Mismatch: 78, NodeFault: 75}).Action == decision.Abort
	}

	t.Run("PREFLIGHT_REQUIRE arch>=7.0 on a P100", func(t *testing.T) {
		in := host("535.129.03", "12.2", p100)
		in.Options.ExtraRequire = "arch>=7.0"
		f := run(in)
		if f.Status != check.Error {
			t.Fatalf("%s: %s", f.Status, f.Message)
		}
		// The driver's CUDA has nothing to do with a GPU architecture.
		if strings.Contains(f.Message, "supports CUDA") || strings.Contains(f.Remedy, "upgrade the driver") {
			t.Errorf("talks about the driver's CUDA: %s | %s", f.Message, f.Remedy)
		}
		// NVIDIA_DISABLE_REQUIRE does not lift it, so it is not offered.
		disabled := in
		disabled.Facts.Container.RequireDisabled = true
		if run(disabled).Status != check.Error {
			t.Fatal("NVIDIA_DISABLE_REQUIRE lifted PREFLIGHT_REQUIRE")
		}
		if strings.Contains(f.Remedy, "NVIDIA_DISABLE_REQUIRE") {
			t.Errorf("offers NVIDIA_DISABLE_REQUIRE, which does not lift it: %s", f.Remedy)
		}
		// "run on a node that satisfies PREFLIGHT_REQUIRE": a V100 node.
		if !strings.Contains(f.Remedy, "run on a node that satisfies PREFLIGHT_REQUIRE") {
			t.Fatalf("remedy %q", f.Remedy)
		}
		elsewhere := host("535.129.03", "12.2", v100)
		elsewhere.Options.ExtraRequire = in.Options.ExtraRequire
		if g := run(elsewhere); g.Status != check.Pass {
			t.Errorf("on a V100: %s %s", g.Status, g.Message)
		}
		// "change PREFLIGHT_REQUIRE".
		changed := in
		changed.Options.ExtraRequire = "arch>=6.0"
		if !strings.Contains(f.Remedy, "change PREFLIGHT_REQUIRE") || run(changed).Status != check.Pass {
			t.Errorf("changing PREFLIGHT_REQUIRE does not help, or is not offered: %s", f.Remedy)
		}
		// "set PREFLIGHT_IGNORE=cuda-requirement".
		if !blocks(in, "") || blocks(in, ignoreFrom(t, f.Remedy)) {
			t.Errorf("PREFLIGHT_IGNORE from the remedy does not let the run go on: %s", f.Remedy)
		}
	})

	t.Run("the image's CUDA 12.8 on driver 535", func(t *testing.T) {
		in := host("535.129.03", "12.2", v100)
		in.Facts.Container.Requirements = []facts.Requirement{{Var: "NVIDIA_REQUIRE_CUDA", Value: "cuda>=12.8"}}
		f := run(in)
		if f.Status != check.Error {
			t.Fatalf("%s: %s", f.Status, f.Message)
		}
		// "upgrade the driver to >= V".
		m := regexp.MustCompile(`upgrade the driver to >= ([0-9.]+)`).FindStringSubmatch(f.Remedy)
		if m == nil {
			t.Fatalf("no driver to upgrade to in %q", f.Remedy)
		}
		upgraded := in
		upgraded.Facts.Host.Driver = facts.Driver{Version: m[1], CUDAVersion: "12.8", Source: "procfs"}
		if g := run(upgraded); g.Status != check.Pass {
			t.Errorf("driver %s: %s %s", m[1], g.Status, g.Message)
		}
		// "use an image built for CUDA <= X".
		m = regexp.MustCompile(`use an image built for CUDA <= ([0-9.]+)`).FindStringSubmatch(f.Remedy)
		if m == nil {
			t.Fatalf("no image CUDA in %q", f.Remedy)
		}
		older := in
		older.Facts.Container.Requirements = []facts.Requirement{{Var: "NVIDIA_REQUIRE_CUDA", Value: "cuda>=" + m[1]}}
		if g := run(older); g.Status != check.Pass {
			t.Errorf("an image for CUDA %s: %s %s", m[1], g.Status, g.Message)
		}
		// "NVIDIA_DISABLE_REQUIRE=true, which the toolkit also honours".
		disabled := in
		disabled.Facts.Container.RequireDisabled = true
		if !strings.Contains(f.Remedy, "NVIDIA_DISABLE_REQUIRE=true") || run(disabled).Status != check.Skip {
			t.Errorf("NVIDIA_DISABLE_REQUIRE does not lift the image's requirement, or is not offered: %s", f.Remedy)
		}
		if !blocks(in, "") || blocks(in, ignoreFrom(t, f.Remedy)) {
			t.Errorf("PREFLIGHT_IGNORE from the remedy does not let the run go on: %s", f.Remedy)
		}
	})
}

// ignoreFrom is the PREFLIGHT_IGNORE value a remedy tells the user to set.
func ignoreFrom(t *testing.T, remedy string) string {
	t.Helper()
	m := regexp.MustCompile(`PREFLIGHT_IGNORE=([a-z-]+)`).FindStringSubmatch(remedy)
	if m == nil {
		t.Fatalf("no PREFLIGHT_IGNORE in %q", remedy)
	}
	return m[1]
}

// A CPU-only framework build is called one plainly.
func TestCPUBuildIsSaidPlainly(t *testing.T) {
	in := check.Input{Facts: facts.Facts{Container: facts.Container{Frameworks: []facts.Framework{
		{Name: "paddlepaddle", Version: "3.0.0", Build: facts.BuildCPU}}}}}
	if f := check.FrameworkCUDA.Run(in); !strings.Contains(f.Message, "paddlepaddle 3.0.0 (CPU build)") {
		t.Errorf("framework-cuda: %s", f.Message)
	}
}
