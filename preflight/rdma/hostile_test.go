package rdma

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
)

// A tree of more HCAs, ports, GID entries, provider files and plugin names
// than any node has is read up to the bounds, never whole.
func TestHostileTreeIsReadUpToTheBounds(t *testing.T) {
	root := fsroot.Root(t.TempDir())
	for i := range maxHCAs + 10 {
		writeFile(t, root, fmt.Sprintf("/sys/class/infiniband/hca%03d/ports/1/link_layer", i), "Ethernet\n")
	}
	for p := range maxPorts + 4 {
		writeFile(t, root, fmt.Sprintf("/sys/class/infiniband/hca000/ports/%d/link_layer", p+1), "Ethernet\n")
	}
	for i := range maxGIDs + 10 {
		writeFile(t, root, fmt.Sprintf("/sys/class/infiniband/hca000/ports/1/gids/%d", i), "0000:0000:0000:0000:0000:ffff:0a00:0001\n")
	}
	for i := range 300 {
		writeFile(t, root, fmt.Sprintf("/etc/libibverbs.d/p%03d.driver", i), "driver mlx5\ndriver efa\n")
	}
	writeFile(t, root, "/etc/libibverbs.d/huge.driver", strings.Repeat("driver x\n", 1<<12))
	writeFile(t, root, "/usr/lib/x86_64-linux-gnu/libibverbs.so.1", "")
	writeFile(t, root, "/usr/lib/x86_64-linux-gnu/libnccl.so.2", "")
	plugins := strings.Repeat("p,", 50000)
	f, _ := Gather(Options{Host: root, Image: root, NCCL: "/usr/lib/x86_64-linux-gnu/libnccl.so.2", NCCLVersion: "2.30.7",
		Env: func(k string) (string, bool) { return plugins, k == "NCCL_NET_PLUGIN" }})
	if len(f.HCAs) != maxHCAs || len(f.HCAs[0].Ports) != maxPorts || len(f.HCAs[0].Ports[0].GIDs) != maxGIDs {
		t.Errorf("%d HCAs, %d ports, %d GIDs; want %d, %d, %d", len(f.HCAs), len(f.HCAs[0].Ports), len(f.HCAs[0].Ports[0].GIDs), maxHCAs, maxPorts, maxGIDs)
	}
	if len(f.Image.Configured) != maxProviders {
		t.Errorf("%d configured providers, want %d", len(f.Image.Configured), maxProviders)
	}
	if len(f.Image.Plugins) != 14 {
		t.Errorf("%d plugins, want NCCL's 14", len(f.Image.Plugins))
	}
}
