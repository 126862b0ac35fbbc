package main

import (
	"reflect"
	"strconv"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/policy"
)

// The exit codes' defaults are policy's: 78 for a mismatch, 75 for a node
// fault.
func TestExitCodeDefaultsArePolicys(t *testing.T) {
	for field, want := range map[string]int{
		"ExitCode":          policy.DefaultMismatchExitCode,
		"NodeFaultExitCode": policy.DefaultNodeFaultExitCode,
	} {
		f, ok := reflect.TypeFor[Config]().FieldByName(field)
		if !ok {
			t.Fatalf("Config has no field %s", field)
		}
		if got := f.Tag.Get("default"); got != strconv.Itoa(want) {
			t.Errorf("Config.%s defaults to %q, want %d", field, got, want)
		}
	}
}

func TestNodeFaultExitCodeIsValidated(t *testing.T) {
	for _, v := range []string{"0", "256", "-1", "x"} {
		r := runShim(t, map[string]string{"PREFLIGHT_NODE_FAULT_EXIT_CODE": v}, "check")
		if r.code != exitUsage {
			t.Errorf("PREFLIGHT_NODE_FAULT_EXIT_CODE=%s: exit %d, want %d\n%s", v, r.code, exitUsage, r.stderr)
		}
	}
}
