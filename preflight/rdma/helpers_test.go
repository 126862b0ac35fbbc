package rdma

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
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
