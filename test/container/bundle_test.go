//go:build container

package container

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/test/procdriver"
	"golang.org/x/sys/unix"
)

// Where things are inside the container.
const (
	shimPath      = "/usr/local/bin/gpu-preflight"
	provenanceDir = "/provenance" // the provenance volume, PREFLIGHT_PROVENANCE_DIR
	scratchDir    = "/scratch"    // a second volume the commands leave markers in
	workDir       = "/work"       // process.cwd
	termLogPath   = "/dev/termination-log"
	nvmlPath      = "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"
)

// cuda118Env is the environment of the nvidia/cuda 11.8.0 base image (NVIDIA's
// container-images/cuda repository, dist/11.8.0/ubuntu2204/base/Dockerfile;
// NVIDIA_REQUIRE_CUDA as quoted in docs/sources.md, "Forward compatibility and NVIDIA_REQUIRE_CUDA",
// "later rebuild"), which the PaddlePaddle 2.6 cuda11.8 images build on. The container runtime passes it to the ENTRYPOINT unchanged.
var cuda118Env = []string{
	"PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"NVARCH=x86_64",
	"NVIDIA_REQUIRE_CUDA=cuda>=11.8 brand=tesla,driver>=470,driver<471 brand=unknown,driver>=470,driver<471 " +
		"brand=nvidia,driver>=470,driver<471 brand=nvidiartx,driver>=470,driver<471 brand=geforce,driver>=470,driver<471 " +
		"brand=geforcertx,driver>=470,driver<471 brand=quadro,driver>=470,driver<471 brand=quadrortx,driver>=470,driver<471 " +
		"brand=titan,driver>=470,driver<471 brand=titanrtx,driver>=470,driver<471",
	"NV_CUDA_CUDART_VERSION=11.8.89-1",
	"NV_CUDA_COMPAT_PACKAGE=cuda-compat-11-8",
	"CUDA_VERSION=11.8.0",
	"LD_LIBRARY_PATH=/usr/local/nvidia/lib:/usr/local/nvidia/lib64",
	"NVIDIA_VISIBLE_DEVICES=all",
	"NVIDIA_DRIVER_CAPABILITIES=compute,utility",
	"HOME=/root",
}

// scenario describes one container: which root, which driver files the
// "toolkit" injects, and the process. The zero value of each field is the
// ordinary case.
type scenario struct {
	busybox  bool // run on the busybox-only root instead of bullseye
	readonly bool // root.readonly
	// noProvenance leaves out the provenance volume and PREFLIGHT_PROVENANCE_DIR.
	noProvenance bool
	uid          uint32 // process.user (uid and gid)
	// driver is what /proc/driver/nvidia holds; nil: no driver at all.
	driver *procdriver.Driver
	// nvml is the host file bind-mounted as libnvidia-ml.so.1; "": none.
	nvml string
	// mounts are more bind mounts (a fake NVML's scenario file).
	mounts []ociMount
	// env is added after the image environment (a later entry wins in
	// runc, as in docker run -e).
	env []string
	// cmd is the training command; the process is gpu-preflight -- cmd.
	cmd []string
	// entrypoint, when set, replaces the image's ENTRYPOINT (gpu-preflight
	// --), as docker run --entrypoint does: the process is entrypoint + cmd.
	entrypoint []string
}

// bundle is one OCI bundle on disk and the host side of its volumes.
type bundle struct {
	id         string
	dir        string
	rootfs     string
	provenance string // host directory of the provenance volume
	scratch    string // host directory of the scratch volume
	termLog    string // host file bind-mounted at /dev/termination-log
	stdout     string
	stderr     string
	spec       ociSpec
}

// newBundle builds the bundle for sc: an overlay root over the cached
// layers, gpu-preflight copied in as the ENTRYPOINT, the driver files and
// volumes as bind mounts, and config.json. Cleanup unmounts the overlay after
// the container is deleted (cleanups run last-registered first).
func (s *suite) newBundle(t *testing.T, sc scenario) *bundle {
	t.Helper()
	dir := t.TempDir()
	b := &bundle{
		id:         containerID(t),
		dir:        dir,
		rootfs:     filepath.Join(dir, "rootfs"),
		provenance: filepath.Join(dir, "volume-provenance"),
		scratch:    filepath.Join(dir, "volume-scratch"),
		termLog:    filepath.Join(dir, "termination-log"),
		stdout:     filepath.Join(dir, "stdout"),
		stderr:     filepath.Join(dir, "stderr"),
	}
	layers := s.bullseye
	if sc.busybox {
		layers = s.busybox
	}
	b.mountRoot(t, layers)

	// The image: gpu-preflight as ENTRYPOINT and a WORKDIR.
	must(t, os.MkdirAll(filepath.Join(b.rootfs, filepath.Dir(shimPath)), 0o755))
	copyFile(t, s.shim, filepath.Join(b.rootfs, shimPath), 0o755)
	must(t, os.MkdirAll(filepath.Join(b.rootfs, workDir), 0o755))
	must(t, os.Chown(filepath.Join(b.rootfs, workDir), int(sc.uid), int(sc.uid)))

	// Volumes are world-writable so a non-root process can use them, as
	// with an emptyDir volume.
	for _, v := range []string{b.provenance, b.scratch} {
		must(t, os.Mkdir(v, 0o777))
		must(t, os.Chmod(v, 0o777))
	}
	must(t, os.WriteFile(b.termLog, nil, 0o666))
	must(t, os.Chmod(b.termLog, 0o666))

	spec := defaultSpec()
	spec.Hostname = "trainer-0"
	spec.Root.Readonly = sc.readonly
	spec.Process.User = ociUser{UID: sc.uid, GID: sc.uid}
	spec.Process.Cwd = workDir
	spec.Process.Args = append([]string{shimPath, "--"}, sc.cmd...)
	if sc.entrypoint != nil {
		spec.Process.Args = append(append([]string(nil), sc.entrypoint...), sc.cmd...)
	}
	spec.Process.Env = append([]string(nil), cuda118Env...)
	if sc.busybox {
		// busybox has no /usr/local/nvidia or cuda; PATH is what a
		// scratch image with busybox sets.
		spec.Process.Env[0] = "PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	}
	if !sc.noProvenance {
		spec.Process.Env = append(spec.Process.Env, "PREFLIGHT_PROVENANCE_DIR="+provenanceDir)
		spec.Mounts = append(spec.Mounts, bindMount(b.provenance, provenanceDir, false))
	}
	spec.Process.Env = append(spec.Process.Env, sc.env...)
	spec.Mounts = append(spec.Mounts,
		bindMount(b.scratch, scratchDir, false),
		bindMount(b.termLog, termLogPath, false),
	)
	if sc.driver != nil {
		must(t, sc.driver.Write(filepath.Join(dir, procDriverDir)))
		timeout := 10
		spec.Hooks = &ociHooks{CreateContainer: []ociHook{{
			Path:    s.hook,
			Args:    []string{"gpu-preflight-test-hook"},
			Env:     []string{hookEnv + "=proc-driver"},
			Timeout: &timeout,
		}}}
		// The device nodes the toolkit creates for a GPU container, with
		// the cgroup rules that let the container open them (NVIDIA's
		// character major is 195; nvidiactl is minor 255).
		// One /dev/nvidiaN per GPU the driver shows, as the toolkit creates
		// for NVIDIA_VISIBLE_DEVICES=all.
		mode := uint32(0o666)
		zero := uint32(0)
		type node struct {
			path  string
			minor int64
		}
		nodes := []node{{"/dev/nvidiactl", 255}}
		for _, g := range sc.driver.GPUs {
			nodes = append(nodes, node{fmt.Sprintf("/dev/nvidia%d", g.Minor), int64(g.Minor)})
		}
		if len(sc.driver.GPUs) == 0 {
			nodes = append(nodes, node{"/dev/nvidia0", 0})
		}
		for _, d := range nodes {
			spec.Linux.Devices = append(spec.Linux.Devices, ociDevice{
				Path: d.path, Type: "c", Major: 195, Minor: d.minor, FileMode: &mode, UID: &zero, GID: &zero,
			})
			major, minor := int64(195), d.minor
			spec.Linux.Resources.Devices = append(spec.Linux.Resources.Devices, ociDeviceRule{
				Allow: true, Type: "c", Major: &major, Minor: &minor, Access: "rwm",
			})
		}
	}
	if sc.nvml != "" {
		// The toolkit bind-mounts the host's driver libraries as files,
		// read-only, into the image's library directory.
		spec.Mounts = append(spec.Mounts, bindMount(sc.nvml, nvmlPath, true))
	}
	spec.Mounts = append(spec.Mounts, sc.mounts...)
	b.spec = spec
	data, err := json.MarshalIndent(spec, "", "\t")
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644))
	return b
}

// mountRoot stacks the cached layers read-only under a per-bundle writable
// layer, so every scenario starts from the same image and none changes the
// cache.
func (b *bundle) mountRoot(t *testing.T, layers []string) {
	t.Helper()
	upper := filepath.Join(b.dir, "upper")
	work := filepath.Join(b.dir, "work")
	for _, d := range []string{upper, work, b.rootfs} {
		must(t, os.Mkdir(d, 0o755))
	}
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", strings.Join(layers, ":"), upper, work)
	if err := unix.Mount("overlay", b.rootfs, "overlay", 0, opts); err != nil {
		t.Fatalf("mounting the overlay root %s (%s): %v", b.rootfs, opts, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(b.rootfs, 0); err != nil {
			t.Errorf("unmounting %s: %v", b.rootfs, err)
		}
	})
}

func bindMount(src, dst string, readonly bool) ociMount {
	opts := []string{"rbind", "nosuid", "nodev"}
	if readonly {
		opts = append(opts, "ro")
	}
	return ociMount{Destination: dst, Type: "bind", Source: src, Options: opts}
}

// containerID is unique per run and names the test, so a leftover container
// in `runc list` says where it came from.
func containerID(t *testing.T) string {
	var r [4]byte
	_, _ = rand.Read(r[:])
	name := strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' {
			return c
		}
		return '-'
	}, t.Name())
	if len(name) > 40 {
		name = name[len(name)-40:]
	}
	return fmt.Sprintf("gpf-%s-%d-%s", name, os.Getpid(), hex.EncodeToString(r[:]))
}

func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	data, err := os.ReadFile(src)
	must(t, err)
	must(t, os.WriteFile(dst, data, mode))
	must(t, os.Chmod(dst, mode))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
