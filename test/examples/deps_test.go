package examples

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/test/harness"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"
)

// TestShimDoesNotLinkTheTestModules: the Kubernetes types and the YAML
// decoder these tests use must never reach the shim's import graph (with or
// without the embedded probe).
func TestShimDoesNotLinkTheTestModules(t *testing.T) {
	env := append(os.Environ(), "GOFLAGS=-mod=readonly")
	for _, tags := range []string{"", "embedprobe"} {
		r := harness.Run(t, 2*time.Minute, harness.Root(t), env, "go", "list", "-deps", "-tags", tags, "./cmd/gpu-preflight")
		if r.Code != 0 {
			t.Fatalf("go list -deps: exit %d\n%s", r.Code, r.Stderr)
		}
		if !strings.Contains(r.Stdout, "github.com/gpu-preflight/gpu-preflight/report") {
			t.Fatalf("go list -deps printed no shim package:\n%s", r.Stdout)
		}
		for _, p := range strings.Fields(r.Stdout) {
			if strings.Contains(p, "k8s.io") || strings.Contains(p, "yaml") || strings.Contains(p, "/test/examples") {
				t.Errorf("the shim (tags %q) imports %s", tags, p)
			}
		}
	}
}

// TestStrictDecodingRefusesUnknownFields proves the manifest checks can
// fail: a misspelt field is an error, not a silently dropped key.
func TestStrictDecodingRefusesUnknownFields(t *testing.T) {
	src := readRepoFile(t, "examples/kubernetes/job.yaml")
	bad := strings.Replace(src, "terminationMessagePolicy:", "terminationMesagePolicy:", 1)
	if bad == src {
		t.Fatal("job.yaml has no terminationMessagePolicy to misspell")
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(bad), &job); err == nil {
		t.Error("a misspelt field decoded without error")
	}
	var pj kubeflowJob
	badPJ := strings.Replace(readRepoFile(t, "examples/kubernetes/paddlejob.yaml"), "restartPolicy: ExitCode", "restartPolicyy: ExitCode", 1)
	if err := yaml.UnmarshalStrict([]byte(badPJ), &pj); err == nil {
		t.Error("a misspelt PaddleJob field decoded without error")
	}
}
