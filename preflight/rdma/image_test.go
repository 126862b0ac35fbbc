package rdma

import (
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
	"github.com/gpu-preflight/gpu-preflight/preflight/ldso/ldsotest"
	"github.com/gpu-preflight/gpu-preflight/preflight/rdma/rdmatest"
	"github.com/gpu-preflight/gpu-preflight/preflight/transport"
)

var (
	debianOnce sync.Once
	ncclOnce   sync.Once
	debianRoot string
	debianErr  error
)

const libdir = "/usr/lib/x86_64-linux-gnu"

// debianImage is a copy of Debian bookworm's rdma-core 44 (libibverbs1,
// ibverbs-providers and the C library, unpacked by scripts/rdma-debian.sh
// into the download cache) with a libnccl.so.2 built beside it: an image
// whose RDMA user space is Debian's own, to change as a test needs.
func debianImage(t testing.TB) fsroot.Root {
	t.Helper()
	debianOnce.Do(func() {
		out, err := exec.Command("bash", "../../scripts/rdma-debian.sh", "image").Output()
		if err != nil {
			debianErr = err
			if ee, ok := err.(*exec.ExitError); ok {
				debianErr = &debianError{err, string(ee.Stderr)}
			}
			return
		}
		debianRoot = strings.TrimSpace(string(out))
	})
	if debianErr != nil {
		t.Fatalf("scripts/rdma-debian.sh image: %v", debianErr)
	}
	// Hard links where the cache shares the file system: the tests only
	// remove files and add new ones, never write into one.
	dir := filepath.Join(t.TempDir(), "linked")
	if err := exec.Command("cp", "-al", debianRoot, dir).Run(); err != nil {
		dir = filepath.Join(filepath.Dir(dir), "copied")
		if out, err := exec.Command("cp", "-a", debianRoot, dir).CombinedOutput(); err != nil {
			t.Fatalf("copying %s: %v\n%s", debianRoot, err, out)
		}
	}
	ncclOnce.Do(func() { ldsotest.Build(t, builds, ldsotest.Lib{Path: "libnccl.so.2", Soname: "libnccl.so.2"}) })
	if out, err := exec.Command("cp", filepath.Join(builds, "libnccl.so.2"), filepath.Join(dir, libdir)).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return fsroot.Root(dir)
}

type debianError struct {
	err    error
	stderr string
}

func (e *debianError) Error() string { return e.err.Error() + "\n" + e.stderr }

func imageFacts(t *testing.T, image fsroot.Root, host rdmatest.Node, env map[string]string) facts.Transport {
	t.Helper()
	o := Options{Host: layout(t, host), Image: image, NCCL: libdir + "/libnccl.so.2", NCCLVersion: "2.22.3",
		Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	f, warns := Gather(o)
	if len(warns) > 0 {
		t.Errorf("warnings: %q", warns)
	}
	return f
}

func codes(f facts.Transport) []string {
	var out []string
	for _, x := range transport.Predict(f).Causes {
		out = append(out, x.Code)
	}
	return out
}

// Debian's rdma-core, as unpacked: NCCL finds libibverbs.so.1 through the
// system directories, its file name says rdma-core 44, and the mlx5
// provider loads from the provider directory with all it needs.
func TestDebianRDMACoreLoadsTheMLX5Provider(t *testing.T) {
	f := imageFacts(t, debianImage(t), rdmatest.HGX(1, "InfiniBand", "400 Gb/sec (4X NDR)"), nil)
	im := f.Image
	if im.Verbs.Path != libdir+"/libibverbs.so.1" || !im.Verbs.Found() || im.RDMACore != 44 || im.VerbsABI != 14 {
		t.Errorf("libibverbs: %+v, rdma-core %d, ABI %d", im.Verbs, im.RDMACore, im.VerbsABI)
	}
	if !slices.Contains(im.Configured, "mlx5") || !slices.Contains(im.Configured, "efa") {
		t.Errorf("configured providers %q", im.Configured)
	}
	if len(im.Providers) != 1 || im.Providers[0].Library.Path != libdir+"/libibverbs/libmlx5-rdmav34.so" || !im.Providers[0].Library.Found() {
		t.Errorf("providers %+v", im.Providers)
	}
	if len(im.Plugins) != 1 || im.Plugins[0].Library.Path != "" {
		t.Errorf("plugins %+v, want libnccl-net.so not found", im.Plugins)
	}
}

// An image without the provider's configuration, or without its library,
// leaves the HCAs unlisted: NCCL falls back to sockets.
func TestMissingProviderIsFound(t *testing.T) {
	cases := map[string][]string{
		"no mlx5.driver":  {"/etc/libibverbs.d/mlx5.driver"},
		"no libmlx5":      {libdir + "/libmlx5.so.1", libdir + "/libmlx5.so.1.24.44.0"},
		"no libibverbs.1": {libdir + "/libibverbs.so.1", libdir + "/libibverbs.so.1.14.44.0"},
	}
	want := map[string]string{"no mlx5.driver": "rdma-provider-missing", "no libmlx5": "rdma-provider-missing", "no libibverbs.1": "libibverbs-missing"}
	for name, remove := range cases {
		t.Run(name, func(t *testing.T) {
			image := debianImage(t)
			for _, p := range remove {
				if err := os.Remove(image.Path(p)); err != nil {
					t.Fatal(err)
				}
			}
			f := imageFacts(t, image, rdmatest.HGX(1, "InfiniBand", "400 Gb/sec (4X NDR)"), nil)
			for i := range f.HCAs {
				f.HCAs[i].Node.Open = facts.UverbsOK // the device opens; the image is at fault
			}
			if got := codes(f); !slices.Contains(got, want[name]) {
				t.Errorf("causes %q, want %s", got, want[name])
			}
		})
	}
}

// On EFA the net plugin is everything: one whose libfabric the image lacks
// does not load, and one that loads, with the efa provider, drives the
// adapters.
func TestEFANeedsALoadablePlugin(t *testing.T) {
	image := debianImage(t)
	work := t.TempDir()
	ldsotest.Build(t, work, ldsotest.Lib{Path: "libfabric.so.1", Soname: "libfabric.so.1"})
	plugin := ldsotest.Build(t, work, ldsotest.Lib{Path: "libnccl-net.so", Soname: "libnccl-net.so", Needs: []string{"libfabric.so.1"}})
	ofi := image.Path("/opt/amazon/ofi-nccl/lib/libnccl-net.so")
	if err := os.MkdirAll(filepath.Dir(ofi), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", plugin, ofi).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	env := map[string]string{"LD_LIBRARY_PATH": "/opt/amazon/ofi-nccl/lib"}
	efa := rdmatest.EFA()
	f := imageFacts(t, image, efa, env)
	if p := f.Image.Plugins[0].Library; p.Path != "/opt/amazon/ofi-nccl/lib/libnccl-net.so" || len(p.Missing) != 1 || !strings.HasPrefix(p.Missing[0], "libfabric.so.1") {
		t.Fatalf("plugin %+v, want libnccl-net.so found and libfabric.so.1 missing", p)
	}
	if got := codes(f); !slices.Contains(got, "efa-plugin-missing") {
		t.Errorf("causes %q, want efa-plugin-missing", got)
	}

	if out, err := exec.Command("cp", filepath.Join(work, "libfabric.so.1"), image.Path("/opt/amazon/ofi-nccl/lib/")).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	f = imageFacts(t, image, efa, env)
	for i := range f.HCAs {
		f.HCAs[i].Node.Open = facts.UverbsOK
	}
	pred := transport.Predict(f)
	if pred.Network != "/opt/amazon/ofi-nccl/lib/libnccl-net.so" || len(pred.Devices) != 4 {
		t.Errorf("prediction %+v (causes %v), want the plugin on the four EFAs", pred, pred.Causes)
	}
}

// libibverbs' file name carries its ABI and rdma-core's release
// (libibverbs.so.1.14.44.0 in Debian bookworm's libibverbs1); nothing else
// is read as one.
func TestVerbsFileNameGivesABIAndRelease(t *testing.T) {
	for name, want := range map[string][3]int{
		"libibverbs.so.1.14.44.0": {14, 44, 1},
		"libibverbs.so.1.14.56.0": {14, 56, 1},
		"libibverbs.so.1":         {},
		"libibverbs.so.1.14":      {},
		"libibverbs.so.1.+14.4.0": {},
		"libibverbs.so.1.x.44.0":  {},
		"libmlx5.so.1.24.44.0":    {},
	} {
		abi, core, ok := verbsFile(name)
		if got := [3]int{abi, core, map[bool]int{true: 1}[ok]}; got != want {
			t.Errorf("verbsFile(%q) = %d, %d, %v; want %v", name, abi, core, ok, want)
		}
	}
}
