package image

import (
	"github.com/gpu-preflight/gpu-preflight/preflight/fatbin"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
)

// Scan is the scan Bake runs (no budget, the real fatbin reader), without
// the manifest around it: what the tests compare a manifest's facts with.
func Scan(root fsroot.Root, env map[string]string, command ...string) (Result, []string) {
	return scanKnown(root, env, command, fatbin.ScanFile, 0, nil)
}

// Load is LoadWithin with the run-time default budget.
func Load(root fsroot.Root, env map[string]string, manifestPath string) (res Result, source string, warnings []string) {
	return LoadWithin(root, env, manifestPath, RuntimeScanBudget)
}
