package main

import "testing"

func TestNodeFaultExitCodeIsValidated(t *testing.T) {
	for _, v := range []string{"0", "256", "-1", "x"} {
		r := runShim(t, map[string]string{"PREFLIGHT_NODE_FAULT_EXIT_CODE": v}, "check")
		if r.code != exitUsage {
			t.Errorf("PREFLIGHT_NODE_FAULT_EXIT_CODE=%s: exit %d, want %d\n%s", v, r.code, exitUsage, r.stderr)
		}
	}
}
