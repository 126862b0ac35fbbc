package examples

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/identity"
	"github.com/gpu-preflight/gpu-preflight/preflight/imageref"
	"github.com/gpu-preflight/gpu-preflight/preflight/orchestrator"
	"github.com/gpu-preflight/gpu-preflight/test/harness"
	"github.com/gpu-preflight/gpu-preflight/test/procdriver"
)

// kubeflowJob is the part of Kubeflow's PaddleJob and PyTorchJob
// (training-operator, kubeflow.org/v1: PaddleJobSpec, PyTorchJobSpec,
// RunPolicy, ReplicaSpec) that the examples use; the pod template is the
// real Kubernetes type. Strict decoding refuses any other field.
type kubeflowJob struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta `json:"metadata"`
	Spec            struct {
		RunPolicy struct {
			CleanPodPolicy *string `json:"cleanPodPolicy,omitempty"`
			BackoffLimit   *int32  `json:"backoffLimit,omitempty"`
		} `json:"runPolicy"`
		PaddleReplicaSpecs  map[string]replicaSpec `json:"paddleReplicaSpecs,omitempty"`
		PytorchReplicaSpecs map[string]replicaSpec `json:"pytorchReplicaSpecs,omitempty"`
	} `json:"spec"`
}

type replicaSpec struct {
	Replicas      *int32                 `json:"replicas,omitempty"`
	RestartPolicy string                 `json:"restartPolicy,omitempty"`
	Template      corev1.PodTemplateSpec `json:"template"`
}

func TestKubernetesJob(t *testing.T) {
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(readRepoFile(t, "examples/kubernetes/job.yaml")), &job); err != nil {
		t.Fatalf("job.yaml is not a batch/v1 Job: %v", err)
	}
	if job.APIVersion != "batch/v1" || job.Kind != "Job" {
		t.Errorf("apiVersion %s kind %s", job.APIVersion, job.Kind)
	}
	abortCode := int32(runAbort(t).Code)
	pfp := job.Spec.PodFailurePolicy
	if pfp == nil {
		t.Fatal("no podFailurePolicy")
	}
	failsOnAbort := false
	for _, r := range pfp.Rules {
		if r.Action == batchv1.PodFailurePolicyActionFailJob && r.OnExitCodes != nil &&
			r.OnExitCodes.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && slices.Contains(r.OnExitCodes.Values, abortCode) {
			failsOnAbort = true
			if c := r.OnExitCodes.ContainerName; c != nil && !slices.ContainsFunc(job.Spec.Template.Spec.Containers,
				func(k corev1.Container) bool { return k.Name == *c }) {
				t.Errorf("the FailJob rule names container %q, which the pod does not have", *c)
			}
		}
	}
	if !failsOnAbort {
		t.Errorf("no podFailurePolicy rule FailJob on exit %d (gpu-preflight's abort)", abortCode)
	}
	// A node fault starts a new pod: its code must not end the Job. So does
	// a PREFLIGHT_TIMEOUT that expires before PREFLIGHT_NVML_TIMEOUT (issue
	// 24: it used to exit with the mismatch code, which FailJob ends).
	for _, extra := range [][]string{nil, {"PREFLIGHT_NVML_TIMEOUT=30s", "PREFLIGHT_TIMEOUT=1s"}} {
		nodeFault := int32(runNodeFault(t, extra...).Code)
		counted := false
		for _, r := range pfp.Rules {
			if r.OnExitCodes == nil || r.OnExitCodes.Operator != batchv1.PodFailurePolicyOnExitCodesOpIn ||
				!slices.Contains(r.OnExitCodes.Values, nodeFault) {
				continue
			}
			counted = r.Action == batchv1.PodFailurePolicyActionCount
			if !counted {
				t.Errorf("%v: podFailurePolicy rule %s on the node-fault exit %d: want Count, so a new pod starts", extra, r.Action, nodeFault)
			}
		}
		if !counted {
			t.Errorf("%v: no podFailurePolicy rule Count on exit %d (gpu-preflight's node fault)", extra, nodeFault)
		}
	}
	if job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q: podFailurePolicy requires Never", job.Spec.Template.Spec.RestartPolicy)
	}
	labels := map[string]string{"batch.kubernetes.io/job-name": job.Name}
	checkPod(t, "job.yaml", job.Spec.Template.Spec, labels, job.Name, nil)

	readme := readRepoFile(t, "examples/kubernetes/README.md")
	for _, want := range []string{
		"{{range .status.containerStatuses}}{{.state.terminated.message}}{{end}}",
		"{{range .status.containerStatuses}}{{.lastState.terminated.message}}{{end}}",
		"-l batch.kubernetes.io/job-name=" + job.Name,
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("examples/kubernetes/README.md does not show %s", want)
		}
	}
}

func TestKubeflowJobs(t *testing.T) {
	code := runAbort(t).Code
	for _, tt := range []struct {
		file, kind string
		// container is the operator's default container name, the one it
		// sets the rank environment in.
		container string
		// operatorEnv is what the operator adds to that container
		// (training-operator pkg/controller.v1/{paddlepaddle,pytorch}/envvar.go,
		// as preflight/orchestrator reads it).
		operatorEnv func(job string) map[string]string
	}{
		{"paddlejob.yaml", "PaddleJob", "paddle", func(job string) map[string]string {
			return map[string]string{"PADDLE_JOB_ID": job, "PADDLE_MASTER": job + "-master-0:36543", "PADDLE_NNODES": "2"}
		}},
		{"pytorchjob.yaml", "PyTorchJob", "pytorch", func(job string) map[string]string {
			return map[string]string{"MASTER_ADDR": job + "-master-0", "MASTER_PORT": "23456", "WORLD_SIZE": "3", "RANK": "0"}
		}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			var kj kubeflowJob
			if err := yaml.UnmarshalStrict([]byte(readRepoFile(t, "examples/kubernetes/"+tt.file)), &kj); err != nil {
				t.Fatalf("%s: %v", tt.file, err)
			}
			if kj.APIVersion != "kubeflow.org/v1" || kj.Kind != tt.kind {
				t.Errorf("apiVersion %s kind %s, want kubeflow.org/v1 %s", kj.APIVersion, kj.Kind, tt.kind)
			}
			specs := kj.Spec.PaddleReplicaSpecs
			other := kj.Spec.PytorchReplicaSpecs
			if tt.kind == "PyTorchJob" {
				specs, other = other, specs
			}
			if len(specs) == 0 || len(other) != 0 {
				t.Fatalf("%s: want the %s replica specs only", tt.file, tt.kind)
			}
			for name, rs := range specs {
				if name != "Master" && name != "Worker" {
					t.Errorf("replica type %q: %s has Master and Worker", name, tt.kind)
				}
				// ExitCode: 1..127 are permanent errors, 128..255 retryable
				// (kubeflow's common ReplicaSpec RestartPolicyExitCode), so
				// the abort code must be below 128 for the job to fail
				// instead of restarting on the same node.
				if rs.RestartPolicy != "ExitCode" || code < 1 || code > 127 {
					t.Errorf("%s: restartPolicy %q with abort code %d: want ExitCode and a code in 1..127", name, rs.RestartPolicy, code)
				}
				// A node fault must be retryable: 128 and above in
				// training-operator's IsRetryableExitCode, and 138 in
				// the releases before it. The manifest sets the code, and
				// the shim exits with it.
				for _, c := range rs.Template.Spec.Containers {
					want := ""
					for _, e := range c.Env {
						if e.Name == "PREFLIGHT_NODE_FAULT_EXIT_CODE" {
							want = e.Value
						}
					}
					if want != "138" {
						t.Errorf("%s container %s: PREFLIGHT_NODE_FAULT_EXIT_CODE=%q, want 138 (retryable)", name, c.Name, want)
						continue
					}
					if got := runNodeFault(t, "PREFLIGHT_NODE_FAULT_EXIT_CODE="+want).Code; strconv.Itoa(got) != want {
						t.Errorf("%s container %s: a node fault exits %d with PREFLIGHT_NODE_FAULT_EXIT_CODE=%s", name, c.Name, got, want)
					}
				}
				if !slices.ContainsFunc(rs.Template.Spec.Containers, func(c corev1.Container) bool { return c.Name == tt.container }) {
					t.Errorf("%s: no container named %s (the operator's default container)", name, tt.container)
				}
				labels := map[string]string{"training.kubeflow.org/job-name": kj.Metadata.Name}
				ctx := checkPod(t, tt.file+" "+name, rs.Template.Spec, labels, kj.Metadata.Name, tt.operatorEnv(kj.Metadata.Name))
				if ctx.Kubeflow.Kind != tt.kind || ctx.Kubeflow.JobName != kj.Metadata.Name {
					t.Errorf("%s: the record would name the Kubeflow job %+v, want %s %s", name, ctx.Kubeflow, tt.kind, kj.Metadata.Name)
				}
			}
			readme := readRepoFile(t, "examples/kubernetes/README.md")
			if !strings.Contains(readme, tt.file) || !strings.Contains(readme, "training.kubeflow.org/job-name") {
				t.Errorf("examples/kubernetes/README.md does not describe %s and its job-name label", tt.file)
			}
		})
	}
}

var (
	nodeFaultMu   sync.Mutex
	nodeFaultRuns = map[string]harness.Result{}
)

// runNodeFault runs the shim on a node whose NVML hangs, a node fault:
// the driver's procfs answers, and the probe blocks in open(2) on a FIFO
// given as the NVML library (the embedded probe), or is a gpu-preflight-nvml
// on PATH that sleeps (a shim built without it). Runs are cached by extra.
func runNodeFault(t *testing.T, extra ...string) harness.Result {
	t.Helper()
	key := strings.Join(extra, " ")
	nodeFaultMu.Lock()
	defer nodeFaultMu.Unlock()
	if r, ok := nodeFaultRuns[key]; ok {
		return r
	}
	tmp := t.TempDir()
	root := filepath.Join(tmp, "root")
	bin := filepath.Join(tmp, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := (procdriver.Driver{Version: "550.54.15"}).Write(filepath.Join(root, "proc", "driver")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "gpu-preflight-nvml"), []byte("#!/bin/sh\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(tmp, "libnvidia-ml.so.1")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range []string{
		"PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin",
		"PREFLIGHT_ROOT=" + root, "PREFLIGHT_HOST_ROOT=" + root, "PREFLIGHT_PROVENANCE_DIR=off", "PREFLIGHT_LOG_FORMAT=json",
		"PREFLIGHT_TERMINATION_LOG=", "PREFLIGHT_NVML_LIBRARY=" + fifo, "PREFLIGHT_NVML_TIMEOUT=500ms",
	} {
		// An extra setting replaces the default (getenv reads the first).
		if name, _, _ := strings.Cut(kv, "="); !slices.ContainsFunc(extra, func(e string) bool { return strings.HasPrefix(e, name+"=") }) {
			env = append(env, kv)
		}
	}
	env = append(env, extra...)
	r := harness.Run(t, time.Minute, tmp, env, shim(t), "--", "true")
	hungNVML := strings.Contains(r.Stderr, `"check":"nvml"`) && strings.Contains(r.Stderr, "did not answer")
	timedOut := strings.Contains(r.Stderr, `"check":"preflight"`) && strings.Contains(r.Stderr, "the NVML probe")
	if !hungNVML && !timedOut {
		t.Fatalf("the hung-NVML run did not report a hung NVML (exit %d):\n%s", r.Code, r.Stderr)
	}
	nodeFaultRuns[key] = r
	return r
}

// checkPod checks every container as gpu-preflight's documentation claims:
// the downward-API variables reach the record (read back through
// preflight/orchestrator itself), the image identity, a provenance volume, and
// the termination message policy.
func checkPod(t *testing.T, where string, spec corev1.PodSpec, podLabels map[string]string, jobName string, operatorEnv map[string]string) facts.Orchestrator {
	t.Helper()
	if len(spec.Containers) == 0 {
		t.Fatalf("%s: no containers", where)
	}
	var last facts.Orchestrator
	pod := fakePod{name: jobName + "-x7k2p", namespace: "ml", uid: "0d6c1a7e-5b0f-4c8e-9a43-2f1d6b8c9e10", node: "gpu-node-7", labels: podLabels}
	for _, c := range spec.Containers {
		w := where + " container " + c.Name
		// command: replaces the image's ENTRYPOINT, and with it the
		// preflight; the training command belongs in args.
		if len(c.Command) > 0 && c.Command[0] != shimPath {
			t.Errorf("%s: command %v replaces the ENTRYPOINT, so gpu-preflight never runs; put the command in args", w, c.Command)
		}
		if len(c.Args) == 0 {
			t.Errorf("%s: no args: the image's CMD runs, which the manifest should say", w)
		}
		if c.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError {
			t.Errorf("%s: terminationMessagePolicy %q, want FallbackToLogsOnError", w, c.TerminationMessagePolicy)
		}
		if _, ok := c.Resources.Limits["nvidia.com/gpu"]; !ok {
			t.Errorf("%s: no nvidia.com/gpu limit", w)
		}
		env := map[string]string{"KUBERNETES_SERVICE_HOST": "10.96.0.1"} // set by the kubelet
		for k, v := range operatorEnv {
			env[k] = v
		}
		for _, e := range c.Env {
			v, err := pod.resolve(e)
			if err != nil {
				t.Errorf("%s: env %s: %v", w, e.Name, err)
			}
			env[e.Name] = v
		}
		var environ []string
		for k, v := range env {
			environ = append(environ, k+"="+v)
		}
		ctx := orchestrator.FromEnv(envvars.Parse(environ))
		last = ctx
		k := ctx.Kubernetes
		if k.PodName != pod.name || k.Namespace != pod.namespace || k.PodUID != pod.uid || k.NodeName != pod.node {
			t.Errorf("%s: the record would say pod %+v; the env does not carry POD_NAME, POD_NAMESPACE, POD_UID, NODE_NAME", w, k)
		}
		if ctx.JobID != jobName || ctx.JobIDSource != "PREFLIGHT_JOB_ID" {
			t.Errorf("%s: the record's job id would be %q from %q, want the job name %q from PREFLIGHT_JOB_ID", w, ctx.JobID, ctx.JobIDSource, jobName)
		}
		im := identity.FromEnv(envvars.Parse(environ))
		if im.Ref != c.Image || im.Digest == "" || im.Digest != imageref.DigestOf(c.Image) {
			t.Errorf("%s: %s=%q, digest %q; want the deployed image %q, by digest", w, identity.EnvImage, im.Ref, im.Digest, c.Image)
		}
		dir := env["PREFLIGHT_PROVENANCE_DIR"]
		mounted := false
		for _, m := range c.VolumeMounts {
			if m.MountPath == dir && slices.ContainsFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name }) {
				mounted = true
			}
		}
		if dir == "" || !mounted {
			t.Errorf("%s: PREFLIGHT_PROVENANCE_DIR=%q is not a mounted volume", w, dir)
		}
	}
	return last
}

type fakePod struct {
	name, namespace, uid, node string
	labels                     map[string]string
}

var labelPath = regexp.MustCompile(`^metadata\.labels\['([^']+)'\]$`)

// resolve gives an env entry's value as the kubelet would for this pod; a
// fieldRef outside the few the examples use is an error.
func (p fakePod) resolve(e corev1.EnvVar) (string, error) {
	if e.ValueFrom == nil {
		return e.Value, nil
	}
	if e.ValueFrom.FieldRef == nil {
		return "", errorf("valueFrom without fieldRef is not used by the examples")
	}
	switch fp := e.ValueFrom.FieldRef.FieldPath; fp {
	case "metadata.name":
		return p.name, nil
	case "metadata.namespace":
		return p.namespace, nil
	case "metadata.uid":
		return p.uid, nil
	case "spec.nodeName":
		return p.node, nil
	default:
		if m := labelPath.FindStringSubmatch(fp); m != nil {
			v, ok := p.labels[m[1]]
			if !ok {
				return "", errorf("label %s is not set on the pods of this kind", m[1])
			}
			return v, nil
		}
		return "", errorf("fieldPath %s is not one the examples resolve", fp)
	}
}
