package rdma

import (
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
	"github.com/gpu-preflight/gpu-preflight/preflight/nccl"
)

func writeFile(t testing.TB, root fsroot.Root, p, content string) {
	t.Helper()
	full := root.Path(p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ibFacts is a rank whose NCCL takes one InfiniBand port.
func ibFacts() facts.Transport {
	return facts.Transport{
		HCAs: []facts.HCA{{Name: "mlx5_0", Driver: "mlx5_core", Verbs: "uverbs0",
			Node:  facts.UverbsNode{Path: "/dev/infiniband/uverbs0", Open: facts.UverbsOK},
			Ports: []facts.HCAPort{{Num: 1, State: "ACTIVE", PhysState: "LinkUp", LinkLayer: facts.LinkInfiniBand}}}},
		Addresses: []nccl.Address{{Interface: "eth0", Index: 2, Prefix: netip.MustParsePrefix("10.0.0.2/24"), Running: true}},
		Image: facts.RDMAImage{NCCL: "/usr/lib/x86_64-linux-gnu/libnccl.so.2",
			Verbs:      facts.LoadedLibrary{Name: "libibverbs.so.1", Path: "/usr/lib/x86_64-linux-gnu/libibverbs.so.1"},
			Configured: []string{"mlx5"},
			Providers:  []facts.VerbsProvider{{Name: "mlx5", Library: facts.LoadedLibrary{Path: "/usr/lib/x86_64-linux-gnu/libibverbs/libmlx5-rdmav34.so"}}}},
		NCCL: facts.NCCLConfig{Version: "2.22.3"},
	}
}
