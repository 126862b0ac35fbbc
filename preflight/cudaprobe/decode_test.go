package cudaprobe

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/cuda"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// seeds reads the checked-in corpus: real documents of the probe.
func seeds(t testing.TB) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob("testdata/fuzz/FuzzDecode/*")
	if err != nil || len(files) < 5 {
		t.Fatalf("seed corpus: %v (%d files)", err, len(files))
	}
	out := map[string][]byte{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// "go test fuzz v1\n[]byte(\"...\")\n"
		var s string
		line := strings.TrimSpace(strings.SplitN(string(data), "\n", 2)[1])
		if _, err := fmt.Sscanf(strings.TrimSuffix(strings.TrimPrefix(line, "[]byte("), ")"), "%q", &s); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[filepath.Base(f)] = []byte(s)
	}
	return out
}

func TestDecodeReadsTheProbesDocuments(t *testing.T) {
	docs := seeds(t)
	for name, want := range map[string]struct {
		outcome string
		devices int
		result  string // the first failed step's error, or the init error
	}{
		"real-libcuda1-535-no-device-init":   {facts.CUDAFailed, 0, "CUDA_ERROR_NO_DEVICE"},
		"real-libcuda1-535-no-device-kernel": {facts.CUDAFailed, 0, "CUDA_ERROR_NO_DEVICE"},
		"no-libcuda":                         {facts.CUDALibraryNotFound, 0, ""},
		"fake-ok-8":                          {facts.CUDAOK, 8, ""},
		"fake-ok-8-context-46":               {facts.CUDAFailed, 8, "CUDA_ERROR_DEVICE_UNAVAILABLE"},
		"fake-ok-1-wrong-value":              {facts.CUDAFailed, 1, facts.CUDAWrongValue},
		"fake-ok-2":                          {facts.CUDAFailed, 2, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
	} {
		d, err := Decode(docs[name])
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		got := ""
		if d.Init != nil && d.Init.Failed() {
			got = d.Init.Error
		}
		for _, dev := range d.Devices {
			if s := dev.Failed(); s != nil && got == "" {
				got = s.Error
			}
		}
		if d.Outcome != want.outcome || len(d.Devices) != want.devices || got != want.result {
			t.Errorf("%s: outcome %s, %d devices, error %q; want %s, %d, %q", name, d.Outcome, len(d.Devices), got, want.outcome, want.devices, want.result)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	many := `{"mode":"init","outcome":"ok","init":{"step":"init","code":0},"devices":[` + strings.Repeat(`{"ordinal":0,"steps":[]},`, cuda.MaxDevices) + `{"ordinal":0,"steps":[]}]}`
	for _, tc := range []struct{ doc, says string }{
		{`not json`, "not its JSON document"},
		{`{"mode":"off","outcome":"ok"}`, "unknown mode"},
		{`{"mode":"init","outcome":"fine"}`, "unknown outcome"},
		{`{"mode":"init","outcome":"ok"}`, "without a successful cuInit"},
		{`{"mode":"init","outcome":"ok","init":{"step":"init","code":0},"devices":[{"ordinal":2,"steps":[{"step":"context","code":46}]}]}`, "device 2 failed"},
		{many, "more than 64"},
		{`{"mode":"init","outcome":"failed","error":"` + strings.Repeat("x", maxStringBytes+1) + `"}`, "longer than"},
	} {
		if _, err := Decode([]byte(tc.doc)); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("Decode(%.60s...) = %v, want an error saying %q", tc.doc, err, tc.says)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"mode":"init","outcome":"ok","init":{"step":"init","code":0}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Decode(data)
		if (d == nil) == (err == nil) {
			t.Fatalf("Decode returned document %v and error %v", d, err)
		}
		if d != nil && (len(d.Devices) > cuda.MaxDevices || (d.Outcome == facts.CUDAOK && (d.Init == nil || d.Init.Failed()))) {
			t.Fatalf("Decode accepted %+v", d)
		}
	})
}

// recordCUDA reads host.cuda of a provenance record.
func recordCUDA(t *testing.T, record []byte) facts.CUDACheck {
	t.Helper()
	var r struct {
		Host struct{ CUDA facts.CUDACheck }
	}
	if err := json.Unmarshal(record, &r); err != nil {
		t.Fatal(err)
	}
	return r.Host.CUDA
}

// TestDecodeStatesEachDevicesResult: every device decoded says how it
// ended, "ok" or its first failed step with CUDA's name for the error,
// whatever the document claimed.
func TestDecodeStatesEachDevicesResult(t *testing.T) {
	doc := `{"mode":"kernel","outcome":"failed","init":{"step":"init","code":0},"devices":[` +
		`{"ordinal":0,"result":"claimed","steps":[{"step":"device","code":0}]},` +
		`{"ordinal":1,"steps":[{"step":"context","code":0},{"step":"launch","code":719,"error":"CUDA_ERROR_LAUNCH_FAILED"},{"step":"release","code":1,"error":"X"}]},` +
		`{"ordinal":2,"steps":[{"step":"compare","code":0,"error":"WRONG_VALUE"}]}]}`
	d, err := Decode([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"ok", "launch: CUDA_ERROR_LAUNCH_FAILED", "compare: WRONG_VALUE"} {
		if got := d.Devices[i].Result; got != want {
			t.Errorf("device %d: result %q, want %q", i, got, want)
		}
	}
	probe, err := Decode(seeds(t)["fake-ok-8-context-46"])
	if err != nil {
		t.Fatal(err)
	}
	var results []string
	for _, dev := range probe.Devices {
		results = append(results, dev.Result)
	}
	if !slices.Contains(results, "context: CUDA_ERROR_DEVICE_UNAVAILABLE") || !slices.Contains(results, "ok") {
		t.Errorf("the probe's own document: results %q", results)
	}
}
