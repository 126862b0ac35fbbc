package rdmaprobe

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// corpus reads the checked-in seeds: documents the probe printed.
func corpus(t testing.TB) map[string][]byte {
	t.Helper()
	files, _ := filepath.Glob("testdata/fuzz/FuzzDecode/*")
	if len(files) < 6 {
		t.Fatalf("seed corpus has %d files", len(files))
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		_, lit, _ := strings.Cut(strings.TrimSpace(string(b)), "\n[]byte(")
		s, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[filepath.Base(f)] = []byte(s)
	}
	return out
}

// Each document the probe printed decodes to what it said: the outcome,
// and the first failure's step and errno as libibverbs left it.
func TestDecodeReadsTheProbesDocuments(t *testing.T) {
	docs := corpus(t)
	for name, want := range map[string]struct{ mode, outcome, failed string }{
		"real-rdma-core-44-enosys":     {"open", facts.RDMAFailed, "ibv_get_device_list ENOSYS"},
		"real-rdma-core-44-hgx-enoent": {"register", facts.RDMAFailed, "ibv_open_device ENOENT"},
		"no-libibverbs":                {"open", facts.RDMALibraryFailed, ""},
		"fake-register-ok-2":           {"register", facts.RDMAOK, ""},
		"fake-register-enomem":         {"register", facts.RDMAFailed, "ibv_reg_mr ENOMEM"},
		"fake-open-eperm-not-listed":   {"open", facts.RDMAFailed, "ibv_open_device EPERM"},
	} {
		d, err := Decode(docs[name], want.mode)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		failed := ""
		steps := []facts.RDMAStep{}
		if d.List != nil {
			steps = append(steps, *d.List)
		}
		for _, dev := range d.Devices {
			steps = append(steps, dev.Steps...)
		}
		for _, s := range steps {
			if s.Failed() {
				failed = s.Step + " " + s.Errno
				break
			}
		}
		if d.Outcome != want.outcome || failed != want.failed {
			t.Errorf("%s: outcome %q, first failure %q; want %q, %q", name, d.Outcome, failed, want.outcome, want.failed)
		}
	}
}

// A document for another mode, an unknown outcome, an ok with a failed
// step or too many devices is refused.
func TestDecodeRefusesWhatTheProbeCannotHaveMeant(t *testing.T) {
	ok := string(corpus(t)["fake-register-ok-2"])
	for name, doc := range map[string]string{
		"another mode":     ok,
		"unknown outcome":  strings.Replace(ok, `"outcome":"ok"`, `"outcome":"fine"`, 1),
		"ok with failures": strings.Replace(ok, `"step":"ibv_reg_mr"`, `"step":"ibv_reg_mr","errno":"ENOMEM"`, 1),
		"too many devices": `{"mode":"register","outcome":"failed","listed":[` + strings.Repeat(`"x",`, MaxDevices) + `"x"]}`,
		"not JSON":         "Segmentation fault",
	} {
		mode := "register"
		if name == "another mode" {
			mode = "open"
		}
		if d, err := Decode([]byte(doc), mode); err == nil {
			t.Errorf("%s: decoded %+v", name, d)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"mode":"open","outcome":"ok","devices":[{"name":"mlx5_0","steps":[]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, mode := range []string{facts.RDMAModeOpen, facts.RDMAModeRegister} {
			d, err := Decode(data, mode)
			if (d == nil) == (err == nil) {
				t.Fatalf("Decode returned document %v and error %v", d, err)
			}
			if d == nil {
				continue
			}
			if d.Mode != mode || len(d.Devices) > MaxDevices || len(d.Listed) > MaxDevices {
				t.Fatalf("Decode accepted %+v", d)
			}
			for _, dev := range d.Devices {
				if d.Outcome == facts.RDMAOK && dev.Failed() != nil {
					t.Fatalf("Decode accepted an ok with a failed step: %+v", d)
				}
			}
		}
	})
}
