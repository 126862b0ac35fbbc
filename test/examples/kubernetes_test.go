package examples

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/gpu-preflight/gpu-preflight/report/identity"
	"github.com/gpu-preflight/gpu-preflight/report/orchestrator"
)

// paddleJob is the part of Kubeflow's PaddleJob (training-operator,
// kubeflow.org/v1, pkg/apis/kubeflow.org/v1 PaddleJobSpec, RunPolicy and
// ReplicaSpec) that the example uses; the pod template is the real
// Kubernetes type. Strict decoding refuses any other field.
type paddleJob struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta `json:"metadata"`
	Spec            struct {
		RunPolicy struct {
			CleanPodPolicy *string `json:"cleanPodPolicy,omitempty"`
			BackoffLimit   *int32  `json:"backoffLimit,omitempty"`
		} `json:"runPolicy"`
		PaddleReplicaSpecs map[string]struct {
			Replicas      *int32                 `json:"replicas,omitempty"`
			RestartPolicy string                 `json:"restartPolicy,omitempty"`
			Template      corev1.PodTemplateSpec `json:"template"`
		} `json:"paddleReplicaSpecs"`
	} `json:"spec"`
}

func TestKubernetesJob(t *testing.T) {
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(readRepoFile(t, "examples/kubernetes/job.yaml")), &job); err != nil {
		t.Fatalf("job.yaml is not a batch/v1 Job: %v", err)
	}
	if job.APIVersion != "batch/v1" || job.Kind != "Job" {
		t.Errorf("apiVersion %s kind %s", job.APIVersion, job.Kind)
	}
	abortCode := int32(runAbort(t).code)
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
	if job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q: podFailurePolicy requires Never", job.Spec.Template.Spec.RestartPolicy)
	}
	labels := map[string]string{"batch.kubernetes.io/job-name": job.Name}
	checkPod(t, "job.yaml", job.Spec.Template.Spec, labels, job.Name)

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

func TestKubeflowPaddleJob(t *testing.T) {
	var pj paddleJob
	if err := yaml.UnmarshalStrict([]byte(readRepoFile(t, "examples/kubernetes/paddlejob.yaml")), &pj); err != nil {
		t.Fatalf("paddlejob.yaml: %v", err)
	}
	if pj.APIVersion != "kubeflow.org/v1" || pj.Kind != "PaddleJob" {
		t.Errorf("apiVersion %s kind %s", pj.APIVersion, pj.Kind)
	}
	if len(pj.Spec.PaddleReplicaSpecs) == 0 {
		t.Fatal("no paddleReplicaSpecs")
	}
	code := runAbort(t).code
	for name, rs := range pj.Spec.PaddleReplicaSpecs {
		if name != "Master" && name != "Worker" {
			t.Errorf("replica type %q: PaddleJob has Master and Worker", name)
		}
		// ExitCode: 1..127 are permanent errors, 128..255 retryable
		// (kubeflow's common ReplicaSpec RestartPolicyExitCode), so the
		// abort code must be below 128 for the job to fail instead of
		// restarting on the same node.
		if rs.RestartPolicy != "ExitCode" || code < 1 || code > 127 {
			t.Errorf("%s: restartPolicy %q with abort code %d: want ExitCode and a code in 1..127", name, rs.RestartPolicy, code)
		}
		labels := map[string]string{"training.kubeflow.org/job-name": pj.Metadata.Name}
		checkPod(t, "paddlejob.yaml "+name, rs.Template.Spec, labels, pj.Metadata.Name)
	}
	readme := readRepoFile(t, "examples/kubernetes/README.md")
	if !strings.Contains(readme, "training.kubeflow.org/job-name") {
		t.Error("examples/kubernetes/README.md does not name the PaddleJob's job-name label")
	}
}

// checkPod checks every container as gpu-preflight's documentation claims:
// the downward-API variables reach the record (read back through
// report/orchestrator itself), the image identity, a provenance volume, and
// the termination message policy.
func checkPod(t *testing.T, where string, spec corev1.PodSpec, podLabels map[string]string, jobName string) {
	t.Helper()
	if len(spec.Containers) == 0 {
		t.Fatalf("%s: no containers", where)
	}
	pod := fakePod{name: jobName + "-x7k2p", namespace: "ml", uid: "0d6c1a7e-5b0f-4c8e-9a43-2f1d6b8c9e10", node: "gpu-node-7", labels: podLabels}
	for _, c := range spec.Containers {
		w := where + " container " + c.Name
		if c.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError {
			t.Errorf("%s: terminationMessagePolicy %q, want FallbackToLogsOnError", w, c.TerminationMessagePolicy)
		}
		if _, ok := c.Resources.Limits["nvidia.com/gpu"]; !ok {
			t.Errorf("%s: no nvidia.com/gpu limit", w)
		}
		env := map[string]string{"KUBERNETES_SERVICE_HOST": "10.96.0.1"} // set by the kubelet
		for _, e := range c.Env {
			v, err := pod.resolve(e)
			if err != nil {
				t.Errorf("%s: env %s: %v", w, e.Name, err)
			}
			env[e.Name] = v
		}
		ctx := orchestrator.FromEnv(orchestrator.MapLookup(env))
		k := ctx.Kubernetes
		if k.PodName != pod.name || k.Namespace != pod.namespace || k.PodUID != pod.uid || k.NodeName != pod.node {
			t.Errorf("%s: the record would say pod %+v; the env does not carry POD_NAME, POD_NAMESPACE, POD_UID, NODE_NAME", w, k)
		}
		if ctx.JobID != jobName || ctx.JobIDSource != "PREFLIGHT_JOB_ID" {
			t.Errorf("%s: the record's job id would be %q from %q, want the job name %q from PREFLIGHT_JOB_ID", w, ctx.JobID, ctx.JobIDSource, jobName)
		}
		im := identity.FromEnv(orchestrator.MapLookup(env))
		if im.Ref != c.Image || im.Digest == "" || im.Digest != identity.DigestOf(c.Image) {
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
