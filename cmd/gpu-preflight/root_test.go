package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
	"github.com/gpu-preflight/gpu-preflight/preflight/host"
)

// imageTree is an unpacked image: a CUDA 12.8 version.json and a fake
// /proc/driver/nvidia that must never be read as this host's driver.
func imageTree(t *testing.T, dir string) {
	t.Helper()
	for p, data := range map[string]string{
		"usr/local/cuda/version.json": `{"cuda":{"name":"CUDA SDK","version":"12.8.1"}}`,
		"proc/driver/nvidia/version":  "NVRM version: NVIDIA UNIX x86_64 Kernel Module  999.99  Thu Oct 19 18:56:32 UTC 2023\n",
		"proc/sys/kernel/osrelease":   "0.0.0-image\n",
	} {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// bundleOf is an OCI runtime bundle: imageTree as rootfs/, and a
// config.json whose process has the environment env.
func bundleOf(t *testing.T, env ...string) string {
	t.Helper()
	bundle := t.TempDir()
	imageTree(t, filepath.Join(bundle, "rootfs"))
	b, _ := json.Marshal(map[string]any{"ociVersion": "1.0.2", "process": map[string]any{"env": env}})
	if err := os.WriteFile(filepath.Join(bundle, "config.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return bundle
}

const imageRequire = "cuda>=12.8 brand=tesla,driver>=535,driver<536"

// `check --root IMAGE` on this GPU-less machine: the host facts (kernel,
// /dev/shm, cgroup, no driver) are this machine's, not the tree's, and the
// image's requirement comes from its config, not from the environment of
// the process running the check. Three forms of config: an OCI runtime
// bundle (rootfs/ and config.json), an OCI image layout, podman's inspect.
func TestCheckRootSeparatesHostAndImage(t *testing.T) {
	here, _ := host.Gather(fsroot.Root("/"))
	bundle := bundleOf(t, "PATH=/usr/bin:/bin", "NVIDIA_REQUIRE_CUDA="+imageRequire, "CUDA_VERSION=12.8.1")
	plain := t.TempDir()
	imageTree(t, plain)
	cases := []struct {
		name string
		args []string
	}{
		{"OCIBundle", []string{"--root", bundle}},
		{"OCILayout", []string{"--root", plain, "--image-config", "../../preflight/imageconfig/testdata/oci-layout"}},
		{"PodmanInspect", []string{"--root", plain, "--image-config", "../../preflight/imageconfig/testdata/podman-image-inspect.json"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The checking process's own requirement must not be taken.
			r := runShim(t, map[string]string{"NVIDIA_REQUIRE_CUDA": "cuda>=99.0"}, append([]string{"check", "--json"}, tc.args...)...)
			var rec map[string]any
			if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil {
				t.Fatalf("exit %d, no record: %v\nstderr: %s", r.code, err, r.stderr)
			}
			if got := get(rec, "host", "kernel"); got != here.Kernel {
				t.Errorf("host.kernel = %v, want this machine's %q", got, here.Kernel)
			}
			if got, _ := get(rec, "host", "shmBytes").(float64); uint64(got) != here.ShmBytes {
				t.Errorf("host.shmBytes = %v, want this machine's %d", got, here.ShmBytes)
			}
			if got, _ := get(rec, "host", "cgroup", "version").(float64); int(got) != here.Cgroup.Version {
				t.Errorf("host.cgroup.version = %v, want this machine's %d", got, here.Cgroup.Version)
			}
			if got := get(rec, "host", "driver", "version"); got != here.Driver.Version {
				t.Errorf("host.driver.version = %v, want this machine's %q (the image tree's procfs is not the host)", got, here.Driver.Version)
			}
			reqs, _ := get(rec, "image", "requirements").([]any)
			if len(reqs) != 1 || get(reqs[0], "value") != imageRequire {
				t.Errorf("image.requirements = %v, want the config's %q", reqs, imageRequire)
			}
			if got := get(rec, "image", "cudaVersion"); got != "12.8" {
				t.Errorf("image.cudaVersion = %v, want 12.8 from the image's version.json", got)
			}
		})
	}
}

// A config that cannot be read is a usage error naming it.
func TestImageConfigUnreadableIsAUsageError(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(bad, []byte(`{"architecture":"amd64"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runShim(t, nil, "check", "--root", t.TempDir(), "--image-config", bad)
	if r.code != 64 || !strings.Contains(r.stderr, "PREFLIGHT_IMAGE_CONFIG") || !strings.Contains(r.stderr, "no environment in it") {
		t.Errorf("exit %d, stderr %q; want 64 naming the variable and the problem", r.code, r.stderr)
	}
}

// `check --root BUNDLE`: the image identity the bundle's environment
// carries is what both the image-pinned check and the record's image say,
// and the checking process's own PREFLIGHT_IMAGE is neither's.
func TestCheckRootIdentityIsTheImagesForCheckAndRecord(t *testing.T) {
	const digest = "sha256:4f1c2d1b7f8e3a9c0d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4"
	const deployed = "registry.example/ml/train:2.3@" + digest
	bundle := bundleOf(t, "PATH=/usr/bin:/bin", "PREFLIGHT_IMAGE="+deployed, "PREFLIGHT_IMAGE_REVISION=9c1e5d2")
	r := runShim(t, map[string]string{"PREFLIGHT_IMAGE": "registry.example/other:latest"}, "check", "--json", "--root", bundle)
	var rec map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil {
		t.Fatalf("exit %d, no record: %v\nstderr: %s", r.code, err, r.stderr)
	}
	if ref, dig, rev := get(rec, "image", "ref"), get(rec, "image", "digest"), get(rec, "image", "revision"); ref != deployed || dig != digest || rev != "9c1e5d2" {
		t.Errorf("record image = ref %v, digest %v, revision %v; want the bundle's %q, %q, 9c1e5d2", ref, dig, rev, deployed, digest)
	}
	if pinned := get(rec, "image", "pinned"); pinned != true {
		t.Errorf("record image.pinned = %v, want true", pinned)
	}
	checks, _ := rec["checks"].([]any)
	found := false
	for _, c := range checks {
		c, _ := c.(map[string]any)
		if c["id"] != "image-pinned" {
			continue
		}
		found = true
		if msg, _ := c["message"].(string); c["status"] != "pass" || !strings.Contains(msg, deployed) {
			t.Errorf("image-pinned = %v %q, want pass naming %s", c["status"], msg, deployed)
		}
	}
	if !found {
		t.Error("no image-pinned finding in the record")
	}
}
