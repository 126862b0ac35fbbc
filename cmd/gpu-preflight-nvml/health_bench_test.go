//go:build cgo

package main

import (
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpu-preflight/gpu-preflight/test/fakenvml"
)

// fakeNode loads the fake libnvidia-ml playing s and returns its devices.
func fakeNode(b *testing.B, s fakenvml.Scenario) (gonvml.Interface, []gonvml.Device) {
	b.Helper()
	dir := b.TempDir()
	lib, err := fakenvml.Build(dir)
	if err != nil {
		b.Fatal(err)
	}
	path, err := s.Write(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Setenv(fakenvml.EnvScenario, path)
	l := gonvml.New(gonvml.WithLibraryPath(lib))
	if ret := l.Init(); ret != gonvml.SUCCESS {
		b.Fatalf("nvmlInit on the fake: %v", ret)
	}
	b.Cleanup(func() { l.Shutdown() })
	var devices []gonvml.Device
	for i := range len(s.GPUs) {
		d, ret := l.DeviceGetHandleByIndex(i)
		if ret != gonvml.SUCCESS {
			b.Fatalf("handle %d: %v", i, ret)
		}
		devices = append(devices, d)
	}
	return l, devices
}

// The health calls for 8 H100s through go-nvml and the fake library
// (docs/PERFORMANCE.md, "Node-health calls"): what they add to a probe.
func BenchmarkHealthOf8FakeH100s(b *testing.B) {
	lib, devices := fakeNode(b, fakenvml.HealthyH100x8())
	if h := health(lib, devices[7]); h.NVLink == nil || h.NVLink.Active != 18 || len(h.Unsupported)+len(h.Errors) != 0 {
		b.Fatalf("GPU 7's health from the fake: %+v", h)
	}
	for b.Loop() {
		for _, d := range devices {
			health(lib, d)
		}
	}
}

// The whole probe's gathering of the same node, health included, for
// scale.
func BenchmarkGatherOf8FakeH100s(b *testing.B) {
	lib, _ := fakeNode(b, fakenvml.HealthyH100x8())
	if doc := gather(lib, "x"); len(doc.GPUs) != 8 || doc.GPUs[7].Health == nil || doc.GPUs[7].Health.NVLink == nil {
		b.Fatalf("gather on the fake: %+v", doc)
	}
	for b.Loop() {
		gather(lib, "libnvidia-ml.so.1")
	}
}
