//go:build podman

package examples

// The real-engine suite (make test-podman, build tag podman): every stage of
// Dockerfile.example and examples/*/Dockerfile built by Debian's podman
// (buildah) with runc, and the images run the way users run them, on a host
// without a GPU and on one emulated the way the NVIDIA Container Toolkit
// sets a container up. scripts/podman.sh holds the engine's settings,
// scripts/podman-images.sh makes the base images the Dockerfiles name.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/preflight/identity"
	"github.com/gpu-preflight/gpu-preflight/test/fakenvml"
	"github.com/gpu-preflight/gpu-preflight/test/harness"
	"github.com/gpu-preflight/gpu-preflight/test/ocihook"
	"github.com/gpu-preflight/gpu-preflight/test/procdriver"
	"github.com/gpu-preflight/gpu-preflight/test/schematest"
)

// hookEnv, set in the hook's environment, turns the test binary into the
// createContainer hook that fills /proc/driver/nvidia (podman refuses
// mounts under /proc, as runc does). hookAnnotation names the prepared tree.
const (
	hookEnv        = "GPU_PREFLIGHT_PODMAN_HOOK"
	hookAnnotation = "gpu-preflight.test/proc-driver"
)

func init() {
	hookMain = func() {
		if os.Getenv(hookEnv) == "" {
			return
		}
		if err := procDriverHook(os.Stdin); err != nil {
			fmt.Fprintf(os.Stderr, "gpu-preflight podman hook: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// procDriverHook does for /proc/driver/nvidia what the toolkit does. runc
// runs createContainer hooks in the container's mount namespace after its
// mounts, before pivot_root (OCI runtime spec, "createContainer Hooks"), so
// the container's procfs is under the bundle's root.path. It mounts a
// read-only tmpfs over proc/driver holding the tree the annotation names.
func procDriverHook(stdin io.Reader) error {
	state, err := ocihook.ReadState(stdin)
	if err != nil {
		return err
	}
	return ocihook.FillProcDriver(state.RootFS, state.Annotations[hookAnnotation])
}

// podman runs scripts/podman.sh (the suite's private engine) with args.
func podman(t *testing.T, limit time.Duration, args ...string) harness.Result {
	t.Helper()
	return harness.Run(t, limit, harness.Root(t), os.Environ(), "bash", append([]string{filepath.Join(harness.Root(t), "scripts", "podman.sh")}, args...)...)
}

// mustPodman is podman that fails the test on a non-zero exit.
func mustPodman(t *testing.T, limit time.Duration, args ...string) harness.Result {
	t.Helper()
	r := podman(t, limit, args...)
	if r.Code != 0 {
		t.Fatalf("podman %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.Code, tail(r.Stdout), tail(r.Stderr))
	}
	return r
}

func tail(s string) string {
	if len(s) > 6000 {
		return "..." + s[len(s)-6000:]
	}
	return s
}

// provenanceArgs are what a user passes with --build-arg.
var provenanceArgs = map[string]string{
	"REVISION": "4e242a1200aa75daea827d0df0003bad115e9a9d",
	"SOURCE":   "https://git.example.com/ml/train-paddle",
	"CREATED":  "2026-11-29T12:00:00Z",
}

// buildArgs are the podman build options every build here gets: no pull,
// the host's network for apt, and the Go modules from the host's module
// cache served as a GOPROXY file tree (the module proxy is reachable here
// only through a TLS-intercepting proxy the containers do not trust).
func buildArgs(t *testing.T, provenance map[string]string) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	modcache := strings.TrimSpace(string(out))
	args := []string{"build", "--pull=never", "--network", "host", "--layers",
		"-v", modcache + ":/host-gomodcache:ro",
		"--build-arg", "GOPROXY=file:///host-gomodcache/cache/download",
		"--build-arg", "GOFLAGS=-mod=readonly",
		"--build-arg", "VERSION=podman-test", "--build-arg", "COMMIT=0123456789abcdef0123456789abcdef01234567"}
	for _, k := range []string{"REVISION", "SOURCE", "CREATED"} {
		args = append(args, "--build-arg", k+"="+provenance[k])
	}
	return args
}

// buildStep is one STEP of a podman build's output and whether it was taken
// from the layer cache.
type buildStep struct {
	instruction string
	cached      bool
}

var stepLine = regexp.MustCompile(`^(?:\[\d+/\d+\] )?STEP \d+/\d+: (.*)$`)

// buildSteps reads podman build's output: each "STEP n/m: INSTRUCTION"
// line, cached when "--> Using cache" follows before the next step.
func buildSteps(out string) []buildStep {
	var steps []buildStep
	for _, line := range strings.Split(out, "\n") {
		if m := stepLine.FindStringSubmatch(line); m != nil {
			steps = append(steps, buildStep{instruction: m[1]})
		} else if strings.HasPrefix(line, "--> Using cache ") && len(steps) > 0 {
			steps[len(steps)-1].cached = true
		}
	}
	return steps
}

// TestPodman builds the images and runs the scenarios in order: each needs
// the images the ones before it built.
func TestPodman(t *testing.T) {
	r := harness.Run(t, 30*time.Minute, harness.Root(t), os.Environ(), "bash", filepath.Join(harness.Root(t), "scripts", "podman-images.sh"))
	if r.Code != 0 {
		t.Fatalf("scripts/podman-images.sh: exit %d\n%s", r.Code, tail(r.Stderr))
	}
	args := buildArgs(t, provenanceArgs)

	// Every stage of Dockerfile.example, each as its own target, then
	// the default (the training image).
	for _, target := range []string{"build", "shim"} {
		tag := "localhost/gpf-example:" + target
		if target == "shim" {
			tag = shimImage
		}
		mustPodman(t, 30*time.Minute, append(args, "-f", "Dockerfile.example", "--target", target, "-t", tag, ".")...)
	}
	first := mustPodman(t, 30*time.Minute, append(args, "-f", "Dockerfile.example", "-t", exampleImage, ".")...)
	// Right after the build it repeats: buildah takes the newest image with
	// a matching history as a step's cache, and the README snippet's image
	// below shares the first steps but not what follows them.
	t.Run("new CREATED rebuilds only the provenance layers", func(t *testing.T) { testCreatedCache(t) })
	for _, b := range exampleBuilds {
		mustPodman(t, 10*time.Minute, append(args, "-t", b.image, b.dir)...)
	}

	t.Run("README builds the shim image", func(t *testing.T) { testReadmeShimCommand(t) })
	t.Run("README Dockerfile snippet", func(t *testing.T) { testReadmeSnippet(t) })
	t.Run("shim image is the binary alone", func(t *testing.T) { testShimImage(t) })
	t.Run("dist image is the release binary alone", func(t *testing.T) { testDistImage(t) })
	t.Run("PREFLIGHT variables are known", func(t *testing.T) { testKnownVariables(t) })
	t.Run("labels and provenance env", func(t *testing.T) { testLabels(t, first.Stdout) })
	for _, img := range []string{exampleImage, paddleImage, pytorchImage} {
		t.Run("default CMD/"+img, func(t *testing.T) { testDefaultCMD(t, img) })
	}
	t.Run("replaced CMD", func(t *testing.T) { testReplacedCMD(t) })
	t.Run("read-only root", func(t *testing.T) { testReadOnly(t) })
	t.Run("user 1000", func(t *testing.T) { testUser(t) })
	t.Run("podman stop", func(t *testing.T) { testStop(t) })
	t.Run("GPU host", func(t *testing.T) { testGPUHost(t) })
	t.Run("old driver aborts with 78", func(t *testing.T) { testOldDriver(t) })
	t.Run("trace reads conmon's CRI log", func(t *testing.T) { testTraceCRI(t) })
}

// testShimImage: the shim target holds one file, the static shim with the
// probe embedded, as `gpu-preflight version` inside it says.
func testShimImage(t *testing.T) {
	v := onlyFile(t, shimImage)
	if !strings.Contains(string(v), "gpu-preflight podman-test (commit 0123456789abcdef") || !strings.Contains(string(v), "NVML probe embedded)") {
		t.Errorf("the shim built in the image says %q", v)
	}
}

// testDistImage: Dockerfile.dist packs make dist's binary for this
// architecture, byte for byte, as the image's only file; it serves as the
// SHIM_IMAGE of examples/paddle/Dockerfile.
func testDistImage(t *testing.T) {
	const img = "localhost/gpf-dist:test"
	mustPodman(t, 5*time.Minute, "build", "--pull=never", "--network", "none", "-f", "Dockerfile.dist", "-t", img, "dist")
	onlyFile(t, img)
	mustPodman(t, 10*time.Minute, append(buildArgs(t, provenanceArgs), "--build-arg", "SHIM_IMAGE="+img, "-t", "localhost/gpf-paddle:dist", "examples/paddle")...)
	r := runImage(t, nil, "localhost/gpf-paddle:dist", "gpu-preflight", "version")
	want, err := exec.Command(filepath.Join(harness.Root(t), "dist", "gpu-preflight-linux-amd64"), "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if r.Code != 0 || r.Stdout != string(want) {
		t.Errorf("the release binary in the example image says %q (exit %d), make dist's %q", r.Stdout, r.Code, want)
	}
}

// onlyFile checks that img holds one file of its own, /out/gpu-preflight,
// and returns what that binary's `version` prints.
func onlyFile(t *testing.T, img string) []byte {
	t.Helper()
	id := strings.TrimSpace(mustPodman(t, time.Minute, "create", img, "/out/gpu-preflight").Stdout)
	defer podman(t, time.Minute, "rm", "-f", id)
	dir := t.TempDir()
	tarPath := filepath.Join(dir, "shim.tar")
	mustPodman(t, time.Minute, "export", "-o", tarPath, id)
	list := harness.Run(t, time.Minute, dir, os.Environ(), "tar", "-tf", tarPath)
	var files []string
	for _, f := range strings.Fields(list.Stdout) {
		if !strings.HasSuffix(f, "/") {
			files = append(files, f)
		}
	}
	// podman export adds the mount points of every container: /etc/hosts,
	// /etc/resolv.conf, /etc/hostname, /run/.containerenv, /dev, /proc...
	var own []string
	for _, f := range files {
		if !strings.HasPrefix(f, "etc/") && !strings.HasPrefix(f, "run/") && !strings.HasPrefix(f, "dev/") {
			own = append(own, f)
		}
	}
	if len(own) != 1 || own[0] != "out/gpu-preflight" {
		t.Fatalf("%s holds %q, want only out/gpu-preflight", img, own)
	}
	harness.Run(t, time.Minute, dir, os.Environ(), "tar", "-xf", tarPath, "out/gpu-preflight")
	return []byte(harness.Run(t, time.Minute, dir, nil, filepath.Join(dir, "out", "gpu-preflight"), "version").Stdout)
}

func inspect(t *testing.T, img, format string) string {
	t.Helper()
	return strings.TrimSpace(mustPodman(t, time.Minute, "image", "inspect", "--format", format, img).Stdout)
}

// testLabels: the build arguments reach the OCI labels and the
// PREFLIGHT_IMAGE_* variables the record reads.
func testLabels(t *testing.T, _ string) {
	for _, img := range []string{exampleImage, paddleImage, pytorchImage} {
		labels := inspect(t, img, "{{json .Labels}}")
		env := inspect(t, img, "{{json .Config.Env}}")
		for _, k := range []string{"REVISION", "SOURCE", "CREATED"} {
			want := provenanceArgs[k]
			if !strings.Contains(labels, `"org.opencontainers.image.`+strings.ToLower(k)+`":"`+want+`"`) {
				t.Errorf("%s: labels %s lack %s=%s", img, labels, k, want)
			}
			if !strings.Contains(env, `"PREFLIGHT_IMAGE_`+k+`=`+want+`"`) {
				t.Errorf("%s: env %s lacks PREFLIGHT_IMAGE_%s", img, env, k)
			}
		}
	}
}

// testCreatedCache: a build with a new CREATED takes every step before the
// provenance ARGs from the cache (go mod download, the sysroot, make build,
// bake) and still carries the new value in its labels and environment.
func testCreatedCache(t *testing.T) {
	changed := map[string]string{}
	for k, v := range provenanceArgs {
		changed[k] = v
	}
	changed["CREATED"] = "2026-12-01T09:30:00Z"
	r := mustPodman(t, 30*time.Minute, append(buildArgs(t, changed), "-f", "Dockerfile.example", "-t", "localhost/gpf-example:recreated", ".")...)
	steps := buildSteps(r.Stdout + r.Stderr)
	if len(steps) < 20 {
		t.Fatalf("read %d build steps from podman build's output:\n%s", len(steps), tail(r.Stdout+r.Stderr))
	}
	provenance := false
	var rebuilt, expensive []string
	for _, s := range steps {
		if strings.HasPrefix(s.instruction, "ARG REVISION") {
			provenance = true
		}
		if strings.HasPrefix(s.instruction, "FROM ") {
			continue
		}
		if !provenance && !s.cached {
			rebuilt = append(rebuilt, s.instruction)
		}
		for _, heavy := range []string{"go mod download", "scripts/sysroot.sh", "make build", "bake"} {
			if strings.HasPrefix(s.instruction, "RUN ") && strings.Contains(s.instruction, heavy) && s.cached {
				expensive = append(expensive, heavy)
			}
		}
	}
	if len(rebuilt) > 0 {
		t.Errorf("a new CREATED rebuilt steps before the provenance layers: %q", rebuilt)
	}
	if len(expensive) != 4 {
		t.Errorf("cached expensive steps %q, want go mod download, the sysroot, make build and bake", expensive)
	}
	if !provenance {
		t.Errorf("no ARG REVISION step in the final stage")
	}
	labels := inspect(t, "localhost/gpf-example:recreated", "{{json .Labels}}")
	env := inspect(t, "localhost/gpf-example:recreated", "{{json .Config.Env}}")
	if !strings.Contains(labels, changed["CREATED"]) || !strings.Contains(env, "PREFLIGHT_IMAGE_CREATED="+changed["CREATED"]) {
		t.Errorf("the rebuilt image's labels %s / env %s do not carry the new CREATED", labels, env)
	}
}

// run is podman run --rm with a provenance volume from the host, and the
// records it left.
type runResult struct {
	harness.Result
	records [][]byte
}

func runImage(t *testing.T, opts []string, img string, cmd ...string) runResult {
	t.Helper()
	prov := t.TempDir()
	if err := os.Chmod(prov, 0o777); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"run", "--rm", "--network", "none", "-v", prov + ":/var/log/gpu-preflight"}, opts...)
	args = append(append(args, img), cmd...)
	r := runResult{Result: podman(t, 2*time.Minute, args...)}
	files, _ := filepath.Glob(filepath.Join(prov, "*.json"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		schematest.Validate(t, data)
		r.records = append(r.records, data)
	}
	return r
}

// decisionLine returns the JSON log line that carries the run's decision (its
// "action": exec or abort), or nil.
func decisionLine(stderr string) map[string]any {
	for _, line := range strings.Split(stderr, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["action"] != nil {
			return m
		}
	}
	return nil
}

// field decodes a record and walks it (harness.Field); nil when rec is no
// JSON.
func field(rec []byte, path ...string) any {
	var v any
	if json.Unmarshal(rec, &v) != nil {
		return nil
	}
	return harness.Field(v, path...)
}

// testDefaultCMD: the image's own CMD runs behind the preflight: the
// decision is logged, then python starts /workspace/train.py. The stand-in
// base images hold the frameworks' version files, not the frameworks, so
// the script then fails importing them: exit 1 with python's traceback.
func testDefaultCMD(t *testing.T, img string) {
	r := runImage(t, nil, img)
	d := decisionLine(r.Stderr)
	if d == nil || d["action"] != "exec" {
		t.Fatalf("no exec decision logged (%v); exit %d\n%s", d, r.Code, tail(r.Stderr))
	}
	if r.Code != 1 || !strings.Contains(r.Stderr, `File "/workspace/train.py"`) {
		t.Errorf("exit %d; want python's traceback from /workspace/train.py and exit 1\n%s", r.Code, tail(r.Stderr))
	}
	if len(r.records) != 1 {
		t.Fatalf("%d records in the provenance volume, want 1", len(r.records))
	}
	if got := field(r.records[0], "image", "scanSource"); got != "manifest" {
		t.Errorf("image.scanSource = %v, want manifest (the image was baked)", got)
	}
	if got := field(r.records[0], "image", "revision"); got != provenanceArgs["REVISION"] {
		t.Errorf("image.revision = %v, want the REVISION build argument", got)
	}
}

// testReplacedCMD: `podman run IMAGE CMD...` replaces only CMD.
func testReplacedCMD(t *testing.T) {
	r := runImage(t, nil, exampleImage, "python", "-c", "import sys; print('replaced', sys.argv[1:])", "a b", "c")
	if r.Code != 0 || r.Stdout != "replaced ['a b', 'c']\n" || decisionLine(r.Stderr) == nil {
		t.Errorf("exit %d, stdout %q\n%s", r.Code, r.Stdout, tail(r.Stderr))
	}
}

// testReadOnly: --read-only leaves the volumes writable; the record is
// written there and the command runs.
func testReadOnly(t *testing.T) {
	r := runImage(t, []string{"--read-only"}, exampleImage, "echo", "read-only")
	if r.Code != 0 || r.Stdout != "read-only\n" || len(r.records) != 1 {
		t.Errorf("exit %d, stdout %q, %d records\n%s", r.Code, r.Stdout, len(r.records), tail(r.Stderr))
	}
}

// testUser: as --user 1000:1000 on the image's own (root-owned) volume the
// record cannot be written: a warning, and the command still runs.
func testUser(t *testing.T) {
	r := podman(t, 2*time.Minute, "run", "--rm", "--network", "none", "--user", "1000:1000", exampleImage, "id", "-u")
	if r.Code != 0 || r.Stdout != "1000\n" {
		t.Fatalf("exit %d, stdout %q\n%s", r.Code, r.Stdout, tail(r.Stderr))
	}
	if !strings.Contains(r.Stderr, "provenance record not written") {
		t.Errorf("no warning that the record could not be written:\n%s", tail(r.Stderr))
	}
}

// testStop: `podman stop` of a `sleep` CMD. Without supervision sleep is
// PID 1 after the exec and ignores SIGTERM, so podman kills it at the stop
// timeout (137); supervised, gpu-preflight forwards SIGTERM and exits 143
// at once; --init (catatonit) does the same.
func testStop(t *testing.T) {
	help := podman(t, time.Minute, "run", "--rm", "--network", "none", "--entrypoint", "/usr/local/bin/gpu-preflight", exampleImage, "-h")
	autoSupervise := regexp.MustCompile(`PREFLIGHT_SUPERVISE[^\n]*auto`).MatchString(help.Stdout + help.Stderr)
	cases := []struct {
		name  string
		opts  []string
		code  int
		quick bool
	}{
		{"supervised", []string{"-e", "PREFLIGHT_SUPERVISE=true"}, 143, true},
		{"init", []string{"--init"}, 143, true},
	}
	if autoSupervise {
		cases = append(cases, struct {
			name  string
			opts  []string
			code  int
			quick bool
		}{"default (supervise auto as PID 1)", nil, 143, true})
	} else {
		cases = append(cases, struct {
			name  string
			opts  []string
			code  int
			quick bool
		}{"default (sleep is PID 1)", nil, 137, false})
	}
	const stopTimeout = 3
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := fmt.Sprintf("gpf-stop-%d-%d", os.Getpid(), time.Now().UnixNano())
			args := append([]string{"run", "-d", "--name", name, "--network", "none"}, c.opts...)
			mustPodman(t, time.Minute, append(args, exampleImage, "sleep", "60")...)
			defer podman(t, time.Minute, "rm", "-f", name)
			// Wait until the preflight has decided and sleep runs.
			deadline := time.Now().Add(30 * time.Second)
			for decisionLine(podman(t, time.Minute, "logs", name).Stderr) == nil {
				if time.Now().After(deadline) {
					t.Fatal("the container never logged its decision")
				}
				time.Sleep(100 * time.Millisecond)
			}
			t0 := time.Now()
			mustPodman(t, time.Minute, "stop", "-t", fmt.Sprint(stopTimeout), name)
			took := time.Since(t0)
			code := inspectContainer(t, name, "{{.State.ExitCode}}")
			t.Logf("%s: podman stop took %v, exit %s", c.name, took.Round(10*time.Millisecond), code)
			if code != fmt.Sprint(c.code) {
				t.Errorf("exit %s, want %d", code, c.code)
			}
			// SIGTERM ended a quick one (143); the stop timeout's SIGKILL
			// would give 137, and cannot come before it.
			if !c.quick && took < stopTimeout*time.Second {
				t.Errorf("podman stop took %v, less than the %d s stop timeout, yet exit %s", took, stopTimeout, code)
			}
		})
	}
}

func inspectContainer(t *testing.T, name, format string) string {
	t.Helper()
	return strings.TrimSpace(mustPodman(t, time.Minute, "inspect", "--format", format, name).Stdout)
}

// gpuHost is what the NVIDIA Container Toolkit gives a container: the
// driver's libnvidia-ml.so.1 bind-mounted into the image's library
// directory, the device nodes, and /proc/driver/nvidia (here from a
// createContainer hook). The fake library plays scenario.
func gpuHost(t *testing.T, driver string, s fakenvml.Scenario) []string {
	t.Helper()
	dir := t.TempDir()
	lib, err := fakenvml.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	scenario, err := s.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Device nodes with the NVIDIA major number (195), as the toolkit
	// passes them: gpu-preflight only looks, it never opens them.
	for name, minor := range map[string]uint32{"nvidiactl": 255, "nvidia0": 0} {
		if err := unix.Mknod(filepath.Join(dir, name), unix.S_IFCHR|0o666, int(unix.Mkdev(195, minor))); err != nil {
			t.Fatalf("mknod %s: %v", name, err)
		}
	}
	tree := filepath.Join(dir, "proc-driver")
	// An H100 host's tree, as the toolkit's hook would mount it.
	if err := (procdriver.Driver{Version: driver, GPUs: []procdriver.GPU{procdriver.H100}}).Write(tree); err != nil {
		t.Fatal(err)
	}
	hooks := filepath.Join(dir, "hooks")
	if err := os.Mkdir(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	hook := map[string]any{
		"version": "1.0.0",
		"hook":    map[string]any{"path": self, "args": []string{self}, "env": []string{hookEnv + "=1"}},
		"when":    map[string]any{"annotations": map[string]string{"^" + regexp.QuoteMeta(hookAnnotation) + "$": ".+"}},
		"stages":  []string{"createContainer"},
	}
	data, _ := json.Marshal(hook)
	if err := os.WriteFile(filepath.Join(hooks, "proc-driver.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{"--hooks-dir", hooks, "--annotation", hookAnnotation + "=" + tree,
		"-v", lib + ":/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1:ro",
		"-v", scenario + ":/run/fake-nvml.scenario:ro", "-e", fakenvml.EnvScenario + "=/run/fake-nvml.scenario",
		"--device", filepath.Join(dir, "nvidiactl") + ":/dev/nvidiactl", "--device", filepath.Join(dir, "nvidia0") + ":/dev/nvidia0"}
}

// testGPUHost: on a GPU host with driver 550 the CUDA 11.8 image passes;
// the embedded probe answers from a memfd through the injected library,
// /proc/driver/nvidia is the hook's, and the baked manifest still holds
// although the library's bind mount changed /usr/lib/x86_64-linux-gnu.
func testGPUHost(t *testing.T) {
	opts := gpuHost(t, "550.54.15", fakenvml.H100x8("550.54.15", 12040))
	r := runImage(t, opts, exampleImage, "echo", "trained")
	if r.Code != 0 || r.Stdout != "trained\n" || len(r.records) != 1 {
		t.Fatalf("exit %d, stdout %q, %d records\n%s", r.Code, r.Stdout, len(r.records), tail(r.Stderr))
	}
	rec := r.records[0]
	if field(rec, "host", "driver", "version") != "550.54.15" || field(rec, "host", "driver", "source") != "nvml-memfd" {
		t.Errorf("host.driver = %v, want 550.54.15 from the embedded probe", field(rec, "host", "driver"))
	}
	if field(rec, "host", "nvml", "outcome") != "ok" {
		t.Errorf("host.nvml = %v", field(rec, "host", "nvml"))
	}
	if got := field(rec, "image", "scanSource"); got != "manifest" {
		t.Errorf("image.scanSource = %v on the GPU host, want manifest: the baked image must stay baked\n%s", got, tail(r.Stderr))
	}
}

// testOldDriver: driver 515.65.01 supports CUDA 11.7; the CUDA 11.8 image
// aborts with 78 before its command, and `podman logs` says why.
func testOldDriver(t *testing.T) {
	opts := gpuHost(t, "515.65.01", fakenvml.H100x8("515.65.01", 11070))
	name := fmt.Sprintf("gpf-old-driver-%d", os.Getpid())
	args := append([]string{"run", "--name", name, "--network", "none"}, opts...)
	r := podman(t, 2*time.Minute, append(args, exampleImage, "echo", "must not run")...)
	defer podman(t, time.Minute, "rm", "-f", name)
	if r.Code != 78 || strings.Contains(r.Stdout, "must not run") {
		t.Fatalf("exit %d, stdout %q; want 78 before the command\n%s", r.Code, r.Stdout, tail(r.Stderr))
	}
	logs := podman(t, time.Minute, "logs", name)
	all := logs.Stdout + logs.Stderr
	for _, want := range []string{`"action":"abort"`, "cuda-requirement", "515.65.01", "520.61.05"} {
		if !strings.Contains(all, want) {
			t.Errorf("podman logs does not say %q:\n%s", want, tail(all))
		}
	}
}

// testReadmeShimCommand runs the README's "Adding it to your Dockerfile"
// build command word for word, with podman for docker and this suite's
// build options (no pull, the module cache) added after `build`.
func testReadmeShimCommand(t *testing.T) {
	text, _ := documented(t, "<!-- dockerfile-shim -->", "<!-- /dockerfile-shim -->")
	var cmds []string
	for _, b := range CodeBlocks(text) {
		cmds = append(cmds, Commands(b)...)
	}
	if len(cmds) != 1 || !strings.HasPrefix(cmds[0], "docker build ") {
		t.Fatalf("README's dockerfile-shim block has %q, want one docker build", cmds)
	}
	words := strings.Fields(strings.TrimPrefix(cmds[0], "docker build "))
	opts := buildArgs(t, provenanceArgs)
	mustPodman(t, 30*time.Minute, append(opts, words...)...)
	if v := inspect(t, shimImage, "{{.Architecture}} {{len .RootFS.Layers}}"); v != "amd64 1" {
		t.Errorf("%s: architecture and layer count %q, want one amd64 layer", shimImage, v)
	}
}

// testReadmeSnippet builds the README's Dockerfile snippet on the paddle
// stand-in (for your/framework-image:tag) and runs it with a replaced CMD.
func testReadmeSnippet(t *testing.T) {
	var snippet string
	for _, b := range FencedBlocks(readRepoFile(t, "README.md")) {
		if b.Lang == "dockerfile" {
			snippet = b.Body
			break
		}
	}
	if !strings.Contains(snippet, "FROM your/framework-image:tag") {
		t.Fatalf("README's first dockerfile block does not build FROM your/framework-image:tag:\n%s", snippet)
	}
	base := regexp.MustCompile(`(?m)^ARG BASE_IMAGE=(\S+)`).FindStringSubmatch(readRepoFile(t, "examples/paddle/Dockerfile"))
	ctx := t.TempDir()
	src := strings.Replace(snippet, "your/framework-image:tag", base[1], 1)
	if err := os.WriteFile(filepath.Join(ctx, "Dockerfile"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	mustPodman(t, 10*time.Minute, append(buildArgs(t, provenanceArgs), "-t", "localhost/gpf-readme:test", ctx)...)
	r := runImage(t, nil, "localhost/gpf-readme:test", "echo", "snippet")
	if r.Code != 0 || r.Stdout != "snippet\n" || len(r.records) != 1 {
		t.Fatalf("exit %d, stdout %q, %d records\n%s", r.Code, r.Stdout, len(r.records), tail(r.Stderr))
	}
	if got := field(r.records[0], "image", "scanSource"); got != "manifest" {
		t.Errorf("image.scanSource = %v, want manifest (the snippet bakes)", got)
	}
}

// testKnownVariables: every PREFLIGHT_* variable the images set is one
// gpu-preflight reads (its configuration as `-h` lists it, or the image
// identity), so a misspelt name cannot silently do nothing.
func testKnownVariables(t *testing.T) {
	help := podman(t, time.Minute, "run", "--rm", "--network", "none", "--entrypoint", shimPath, exampleImage, "-h")
	known := map[string]bool{}
	for _, m := range regexp.MustCompile(`PREFLIGHT_[A-Z_]+`).FindAllString(help.Stdout+help.Stderr, -1) {
		known[m] = true
	}
	if !known["PREFLIGHT_POLICY"] {
		t.Fatalf("gpu-preflight -h lists no configuration:\n%s%s", help.Stdout, help.Stderr)
	}
	for _, n := range []string{identity.EnvImage, identity.EnvDigest, identity.EnvRevision, identity.EnvCreated, identity.EnvSource} {
		known[n] = true
	}
	for _, img := range []string{exampleImage, paddleImage, pytorchImage} {
		var env []string
		if err := json.Unmarshal([]byte(inspect(t, img, "{{json .Config.Env}}")), &env); err != nil {
			t.Fatal(err)
		}
		for _, kv := range env {
			name, _, _ := strings.Cut(kv, "=")
			if strings.HasPrefix(name, "PREFLIGHT_") && !known[name] {
				t.Errorf("%s sets %s, which gpu-preflight does not read", img, name)
			}
		}
	}
}
