//go:build container

package examples

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/report/schematest"
)

// baseImageEnv stands in for the environment of the PaddlePaddle 2.6 CUDA 11.8
// image: that of the nvidia/cuda 11.8.0 base it is built on (NVIDIA's
// container-images/cuda dist/11.8.0/ubuntu2204/base/Dockerfile, as the
// container suite's cuda118Env). Its file tree is the container suite's
// cached bullseye root with the PaddlePaddle 2.6.0 post118 layer
// (scripts/rootfs-bullseye.sh).
var baseImageEnv = []string{
	"PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"NVIDIA_REQUIRE_CUDA=" + require118,
	"CUDA_VERSION=11.8.0",
	"LD_LIBRARY_PATH=/usr/local/nvidia/lib:/usr/local/nvidia/lib64",
	"NVIDIA_VISIBLE_DEVICES=all",
	"NVIDIA_DRIVER_CAPABILITIES=compute,utility",
	"HOME=/root",
}

// buildArgs are what a user passes with --build-arg.
var buildArgs = map[string]string{
	"REVISION": "4e242a1200aa75daea827d0df0003bad115e9a9d",
	"SOURCE":   "https://git.example.com/ml/train-paddle",
	"CREATED":  "2026-11-29T12:00:00Z",
}

// image is the result of running a Dockerfile's final stage as local
// commands: a root filesystem and the image configuration.
type image struct {
	rootfs     string
	env        []string
	workdir    string
	volumes    []string
	entrypoint []string
	cmd        []string
}

// TestImageTree builds the training image of Dockerfile.example and
// examples/paddle/Dockerfile without Docker: the base image is the cached
// bullseye+PaddlePaddle root (overlayfs, a fresh writable layer on top),
// each instruction of the final stage runs as Docker would run it (COPY of
// the shim the Makefile built, RUN in a runc container with the image's
// environment), and then the image runs with runc, ENTRYPOINT and all.
func TestImageTree(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("TestImageTree needs root (overlayfs, runc): run `make test-examples-container` as root")
	}
	for _, tool := range []string{"runc", "debootstrap", "flock", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed: run `make deps` as root", tool)
		}
	}
	cache := filepath.Join(repo(t), ".cache", "rootfs")
	r := runCmd(t, repo(t), os.Environ(), 20*time.Minute, "bash", "scripts/rootfs-bullseye.sh", cache)
	if r.code != 0 {
		t.Fatalf("scripts/rootfs-bullseye.sh: exit %d\n%s", r.code, r.stderr)
	}
	base := strings.TrimSpace(r.stdout[strings.LastIndex(strings.TrimSpace(r.stdout), "\n")+1:])
	layers := []string{filepath.Join(cache, "paddle-2.6-cuda11.8"), base}

	for _, d := range []struct{ dockerfile, context string }{
		{"Dockerfile.example", "."},
		{"examples/paddle/Dockerfile", "examples/paddle"},
	} {
		t.Run(d.dockerfile, func(t *testing.T) {
			im := buildImage(t, d.dockerfile, filepath.Join(repo(t), d.context), layers)

			// docker run IMAGE sh -c '...': CMD replaced, ENTRYPOINT kept.
			res := runImage(t, im, []string{"sh", "-c", "test -f /workspace/train.py && echo trained"}, nil)
			if res.code != 0 || res.stdout != "trained\n" {
				t.Fatalf("the image exits %d, stdout %q\nstderr:\n%s", res.code, res.stdout, res.stderr)
			}
			rec := res.record(t)
			want := map[string]any{
				"decision.action":                "exec",
				"image.scanSource":               "manifest", // what bake wrote at build time
				"image.revision":                 buildArgs["REVISION"],
				"image.created":                  buildArgs["CREATED"],
				"image.cudaVersion":              "11.8",
				"image.frameworks.0.name":        "paddlepaddle",
				"image.frameworks.0.cudaVersion": "11.8",
			}
			for p, v := range want {
				if got := lookup(rec, p); got != v {
					t.Errorf("record %s = %v, want %v", p, got, v)
				}
			}
			if got := lookup(rec, "command.argv"); fmt.Sprint(got) != fmt.Sprint([]any{"sh", "-c", "test -f /workspace/train.py && echo trained"}) {
				t.Errorf("record command.argv = %v", got)
			}

			// The same image on a node that must have a GPU and has none:
			// exit 78, the reason in the termination log, the command not run.
			res = runImage(t, im, []string{"sh", "-c", "touch /var/log/gpu-preflight/ran"}, []string{"PREFLIGHT_MIN_GPUS=1"})
			if res.code != 78 {
				t.Fatalf("exit %d, want 78\nstderr:\n%s", res.code, res.stderr)
			}
			if !strings.HasPrefix(res.termination, "gpu-preflight: abort (exit 78") || !strings.Contains(res.termination, "gpu-count: ") {
				t.Errorf("termination message %q", res.termination)
			}
			if _, err := os.Stat(filepath.Join(res.provenance, "ran")); err == nil {
				t.Error("the command ran after an abort")
			}
		})
	}
}

// buildImage runs the final stage of a Dockerfile into a root filesystem.
func buildImage(t *testing.T, dockerfile, context string, layers []string) image {
	t.Helper()
	df := loadDockerfile(t, dockerfile)
	final, _ := df.Stage("")
	dir := t.TempDir()
	im := image{rootfs: filepath.Join(dir, "rootfs"), env: slices.Clone(baseImageEnv), workdir: "/"}
	mountOverlay(t, dir, layers)

	vars := map[string]string{}
	for _, kv := range im.env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	for _, in := range final.Body {
		switch in.Cmd {
		case "ARG", "ENV":
			kv, err := KeyValues(in)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range kv {
				v := Expand(p[1], vars)
				if in.Cmd == "ARG" {
					if b, ok := buildArgs[p[0]]; ok {
						v = b
					}
				} else {
					im.env = setEnv(im.env, p[0], v)
				}
				vars[p[0]] = v
			}
		case "LABEL":
		case "COPY":
			w, err := Words(in.Args)
			if err != nil || len(w) != 2 {
				t.Fatalf("line %d: COPY %q: want SRC DST", in.Line, in.Args)
			}
			dst := filepath.Join(im.rootfs, workdirAbs(im.workdir, w[1]))
			src := filepath.Join(context, w[0])
			if in.Flags["from"] != "" {
				// The shim stage's output is what `make build` leaves in
				// bin/gpu-preflight (TestDockerfileExampleBuildsTheShimAsTheMakefileDoes).
				if w[1] != shimPath {
					t.Fatalf("line %d: COPY --from=%s to %s: only the shim is copied from another stage", in.Line, in.Flags["from"], w[1])
				}
				src = shim(t)
			}
			copyFile(t, src, dst)
		case "RUN":
			if in.Exec == nil {
				t.Fatalf("line %d: shell-form RUN is not run here (no shell guaranteed in the image)", in.Line)
			}
			res := runContainer(t, im, in.Exec, im.env, false, nil)
			if res.code != 0 {
				t.Fatalf("line %d: RUN %v: exit %d\n%s%s", in.Line, in.Exec, res.code, res.stdout, res.stderr)
			}
			t.Logf("RUN %v: %s", in.Exec, strings.TrimSpace(res.stdout))
		case "WORKDIR":
			im.workdir = workdirAbs(im.workdir, Expand(in.Args, vars))
			if err := os.MkdirAll(filepath.Join(im.rootfs, im.workdir), 0o755); err != nil {
				t.Fatal(err)
			}
		case "VOLUME":
			im.volumes = append(im.volumes, in.Exec...)
		case "ENTRYPOINT":
			im.entrypoint = in.Exec
		case "CMD":
			im.cmd = in.Exec
		default:
			t.Fatalf("line %d: %s is not one this build runs", in.Line, in.Cmd)
		}
	}
	if _, err := os.Stat(filepath.Join(im.rootfs, "etc/gpu-preflight/image.json")); err != nil {
		t.Fatalf("RUN bake left no manifest: %v", err)
	}
	return im
}

func workdirAbs(wd, p string) string {
	if path.IsAbs(p) {
		return path.Clean(p)
	}
	return path.Join(wd, p)
}

func setEnv(env []string, k, v string) []string {
	for i, kv := range env {
		if strings.HasPrefix(kv, k+"=") {
			env[i] = k + "=" + v
			return env
		}
	}
	return append(env, k+"="+v)
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, st.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
}

// mountOverlay stacks layers read-only under a fresh writable layer at
// dir/rootfs, so the build never changes the cache.
func mountOverlay(t *testing.T, dir string, layers []string) {
	t.Helper()
	for _, d := range []string{"upper", "work", "rootfs"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", strings.Join(layers, ":"),
		filepath.Join(dir, "upper"), filepath.Join(dir, "work"))
	rootfs := filepath.Join(dir, "rootfs")
	if r := runCmd(t, dir, os.Environ(), time.Minute, "mount", "-t", "overlay", "overlay", "-o", opts, rootfs); r.code != 0 {
		t.Fatalf("mounting the overlay root: %s", r.stderr)
	}
	t.Cleanup(func() {
		if r := runCmd(t, dir, os.Environ(), time.Minute, "umount", rootfs); r.code != 0 {
			t.Errorf("umount %s: %s", rootfs, r.stderr)
		}
	})
}

type containerResult struct {
	cmdResult
	provenance  string // host directory of the provenance volume
	termination string
}

// runImage runs the image as `docker run -e extraEnv IMAGE cmd...` would:
// ENTRYPOINT + cmd, a volume at each VOLUME, /dev/termination-log bound to
// a host file as the kubelet does.
func runImage(t *testing.T, im image, cmd, extraEnv []string) containerResult {
	t.Helper()
	env := slices.Clone(im.env)
	for _, kv := range extraEnv {
		k, v, _ := strings.Cut(kv, "=")
		env = setEnv(env, k, v)
	}
	return runContainer(t, im, append(slices.Clone(im.entrypoint), cmd...), env, true, im.volumes)
}

var containerSeq atomic.Int64

// runContainer runs args in a runc container on the image's root filesystem
// (writable, as in a RUN step or a container's own layer).
func runContainer(t *testing.T, im image, args, env []string, termLog bool, volumes []string) containerResult {
	t.Helper()
	bundle := t.TempDir()
	res := containerResult{provenance: filepath.Join(bundle, "volume")}
	if err := os.Mkdir(res.provenance, 0o777); err != nil {
		t.Fatal(err)
	}
	mounts := []map[string]any{
		{"destination": "/proc", "type": "proc", "source": "proc"},
		{"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
		{"destination": "/dev/shm", "type": "tmpfs", "source": "shm", "options": []string{"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}},
		{"destination": "/sys", "type": "sysfs", "source": "sysfs", "options": []string{"nosuid", "noexec", "nodev", "ro"}},
	}
	for _, v := range volumes {
		mounts = append(mounts, map[string]any{"destination": v, "type": "bind", "source": res.provenance, "options": []string{"rbind"}})
	}
	term := filepath.Join(bundle, "termination-log")
	if termLog {
		if err := os.WriteFile(term, nil, 0o666); err != nil {
			t.Fatal(err)
		}
		mounts = append(mounts, map[string]any{"destination": "/dev/termination-log", "type": "bind", "source": term, "options": []string{"rbind"}})
	}
	// `runc spec` defaults (runc 1.1.5), trimmed to what these runs need;
	// test/container/oci_test.go has the full set.
	spec := map[string]any{
		"ociVersion": "1.0.2-dev",
		"process": map[string]any{
			"terminal": false, "user": map[string]any{"uid": 0, "gid": 0},
			"args": args, "env": env, "cwd": im.workdir, "noNewPrivileges": true,
		},
		"root":     map[string]any{"path": im.rootfs, "readonly": false},
		"hostname": "trainer-0",
		"mounts":   mounts,
		"linux": map[string]any{
			"namespaces": []map[string]string{{"type": "pid"}, {"type": "network"}, {"type": "ipc"}, {"type": "uts"}, {"type": "mount"}},
			"resources":  map[string]any{"devices": []map[string]any{{"allow": false, "access": "rwm"}}},
		},
	}
	data, err := json.MarshalIndent(spec, "", "\t")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bundle, "config.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprintf("gpf-examples-%d-%d", os.Getpid(), containerSeq.Add(1))
	t.Cleanup(func() {
		runCmd(t, bundle, os.Environ(), 30*time.Second, "runc", "delete", "--force", id)
	})
	res.cmdResult = runCmd(t, bundle, os.Environ(), 2*time.Minute, "runc", "run", "--bundle", bundle, id)
	if termLog {
		msg, err := os.ReadFile(term)
		if err != nil {
			t.Fatal(err)
		}
		res.termination = string(msg)
	}
	return res
}

// record reads the one provenance record the run left on its volume.
func (r containerResult) record(t *testing.T) map[string]any {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(r.provenance, "*.json"))
	if len(files) != 1 {
		t.Fatalf("%d records on the provenance volume, want 1\nstderr:\n%s", len(files), r.stderr)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate(t, data)
	var rec map[string]any
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// lookup walks a decoded record by a dotted path; numeric parts index
// arrays.
func lookup(v any, p string) any {
	for _, part := range strings.Split(p, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[part]
		case []any:
			var i int
			if _, err := fmt.Sscan(part, &i); err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}
