package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/container"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/report/redact"
)

// BenchmarkEnvironment is what reading the environment costs per run: the
// one parse (envvars.Parse), what the container facts keep of it
// (container.Env), what the record keeps (redact.Env) and the launcher's
// variables the record looks up. Two environments: NGC PyTorch 23.10's
// variables, and 10 000 variables, as in hostile_test.go.
func BenchmarkEnvironment(b *testing.B) {
	ngc, err := os.ReadFile("../../preflight/envvars/testdata/ngc-pytorch-23.10.env")
	if err != nil {
		b.Fatal(err)
	}
	many := make([]string, 10000)
	for i := range many {
		many[i] = fmt.Sprintf("USER_VARIABLE_%d=some value %d", i, i)
	}
	for _, tc := range []struct {
		name    string
		environ []string
	}{
		{"ngc-pytorch-23.10", strings.Split(strings.TrimSpace(string(ngc)), "\n")},
		{"10000-variables", many},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				env := envvars.Parse(tc.environ)
				_ = container.Env(env)
				_ = redact.Env(env)
				_, _ = env.Lookup("SLURM_JOB_ID")
			}
		})
	}
}
