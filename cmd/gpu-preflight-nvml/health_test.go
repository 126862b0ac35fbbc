//go:build cgo

package main

import (
	"errors"
	"slices"
	"strings"
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// withoutFabricV is LookupSymbol of a library without
// nvmlDeviceGetGpuFabricInfoV: go-nvml's mock cannot answer that call (its
// handler wraps the real library's device), so mock tests take the
// unversioned one; the fake libnvidia-ml answers both end to end.
func withoutFabricV(symbol string) error {
	if symbol == "nvmlDeviceGetGpuFabricInfoV" {
		return errors.New("undefined symbol")
	}
	return nil
}

// answerHealth makes d answer every health call: with ret when it is not
// SUCCESS, else as an idle, healthy GPU with links active NVLinks and no
// fabric (an A100's answers).
func answerHealth(d *mock.Device, ret gonvml.Return, links int) {
	ok := ret == gonvml.SUCCESS
	d.GetRemappedRowsFunc = func() (int, int, bool, bool, gonvml.Return) { return 0, 0, false, false, ret }
	d.GetGpuFabricInfoFunc = func() (gonvml.GpuFabricInfo, gonvml.Return) {
		if ok {
			return gonvml.GpuFabricInfo{}, gonvml.ERROR_NOT_SUPPORTED
		}
		return gonvml.GpuFabricInfo{}, ret
	}
	d.GetMemoryInfo_v2Func = func() (gonvml.Memory_v2, gonvml.Return) {
		return gonvml.Memory_v2{Total: 80 << 30, Reserved: 512 << 20, Free: 80<<30 - 512<<20}, ret
	}
	d.GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) { return nil, ret }
	d.GetComputeModeFunc = func() (gonvml.ComputeMode, gonvml.Return) { return gonvml.COMPUTEMODE_DEFAULT, ret }
	d.GetNvLinkStateFunc = func(l int) (gonvml.EnableState, gonvml.Return) {
		if ok && l >= links {
			return 0, gonvml.ERROR_INVALID_ARGUMENT
		}
		return gonvml.FEATURE_ENABLED, ret
	}
	d.GetCurrPcieLinkGenerationFunc = func() (int, gonvml.Return) { return 1, ret }
	d.GetCurrPcieLinkWidthFunc = func() (int, gonvml.Return) { return 16, ret }
	d.GetMaxPcieLinkGenerationFunc = func() (int, gonvml.Return) { return 4, ret }
	d.GetMaxPcieLinkWidthFunc = func() (int, gonvml.Return) { return 16, ret }
	d.GetGpuMaxPcieLinkGenerationFunc = func() (int, gonvml.Return) { return 4, ret }
	d.GetCurrentClocksEventReasonsFunc = func() (uint64, gonvml.Return) { return gonvml.ClocksEventReasonGpuIdle, ret }
}

// dgxH100 is go-nvml's DGX H100 mock, every GPU healthy and registered in
// the fabric.
func dgxH100(t *testing.T) *server.Server {
	t.Helper()
	s := dgxh100.New()
	s.ErrorStringFunc = errorString
	s.LookupSymbolFunc = withoutFabricV
	for _, d := range s.Devices {
		d := d.(*server.Device)
		answerHealth(&d.Device, gonvml.SUCCESS, 18)
		d.GetGpuFabricInfoFunc = func() (gonvml.GpuFabricInfo, gonvml.Return) {
			return gonvml.GpuFabricInfo{State: gonvml.GPU_FABRIC_STATE_COMPLETED}, gonvml.SUCCESS
		}
	}
	return s
}

func TestHealthReadsEveryCallOfAHealthyGPU(t *testing.T) {
	s := dgxH100(t)
	h := health(s, s.Devices[0])
	if h.RemappedRows == nil || *h.RemappedRows != (facts.RemappedRows{}) {
		t.Errorf("remapped rows %+v", h.RemappedRows)
	}
	if h.Fabric == nil || h.Fabric.State != facts.FabricCompleted || h.Fabric.Status != 0 || h.Fabric.HealthMask != nil {
		t.Errorf("fabric %+v: want completed, success, and no mask from the unversioned call", h.Fabric)
	}
	if h.Memory == nil || h.Memory.UsedBytes != 0 || h.Memory.ReservedBytes != 512<<20 {
		t.Errorf("memory %+v", h.Memory)
	}
	if h.Processes == nil || h.Processes.Count != 0 || h.ComputeMode != facts.ComputeModeDefault {
		t.Errorf("processes %+v, compute mode %q", h.Processes, h.ComputeMode)
	}
	if h.NVLink == nil || h.NVLink.Active != 18 || len(h.NVLink.Inactive) != 0 {
		t.Errorf("nvlink %+v", h.NVLink)
	}
	if want := (facts.PCIe{CurrentGeneration: 1, CurrentWidth: 16, MaxGeneration: 4, MaxWidth: 16, GPUMaxGeneration: 4}); h.PCIe == nil || *h.PCIe != want {
		t.Errorf("pcie %+v, want %+v", h.PCIe, want)
	}
	if h.ClockEventMask == nil || *h.ClockEventMask != gonvml.ClocksEventReasonGpuIdle || len(h.ClockEvents) != 0 {
		t.Errorf("clocks %v %v: idle is no event gpu-preflight judges", h.ClockEventMask, h.ClockEvents)
	}
	if len(h.Unsupported) != 0 || len(h.Errors) != 0 {
		t.Errorf("unsupported %v, errors %v", h.Unsupported, h.Errors)
	}
}

// NOT_SUPPORTED is neither healthy nor sick: the fact stays unset and its
// key says why, as for a GPU lost off the bus, with NVML's own string.
func TestHealthRecordsWhatNVMLDidNotAnswer(t *testing.T) {
	keys := []string{"remappedRows", "fabric", "memory", "processes", "computeMode", "nvlink",
		"pcie.currentGeneration", "pcie.currentWidth", "pcie.maxGeneration", "pcie.maxWidth", "pcie.gpuMaxGeneration", "clockEvents"}
	for _, ret := range []gonvml.Return{gonvml.ERROR_NOT_SUPPORTED, gonvml.ERROR_GPU_IS_LOST} {
		t.Run(errorString(ret), func(t *testing.T) {
			s := dgxH100(t)
			d := s.Devices[0].(*server.Device)
			answerHealth(&d.Device, ret, 0)
			h := health(s, d)
			if h.RemappedRows != nil || h.Fabric != nil || h.Memory != nil || h.Processes != nil || h.ComputeMode != "" ||
				h.NVLink != nil || h.PCIe != nil || h.ClockEventMask != nil {
				t.Errorf("facts set from failed calls: %+v", h)
			}
			got := h.Unsupported
			if ret != gonvml.ERROR_NOT_SUPPORTED {
				got = nil
				for k, v := range h.Errors {
					if v != "GPU is lost" {
						t.Errorf("%s: %q, want NVML's string", k, v)
					}
					got = append(got, k)
				}
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(keys))
			if !slices.Equal(got, want) {
				t.Errorf("keys %v, want %v", got, want)
			}
		})
	}
}

// Entry points an older driver lacks are never called: go-nvml would jump
// to an unresolved symbol. They count as unsupported.
func TestHealthCallsNoEntryPointTheLibraryLacks(t *testing.T) {
	lacking := []string{"nvmlDeviceGetRemappedRows", "nvmlDeviceGetGpuFabricInfoV", "nvmlDeviceGetGpuFabricInfo",
		"nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetGpuMaxPcieLinkGeneration", "nvmlDeviceGetCurrentClocksEventReasons"}
	s := dgxH100(t)
	s.LookupSymbolFunc = func(symbol string) error {
		if slices.Contains(lacking, symbol) {
			return errors.New("undefined symbol")
		}
		return nil
	}
	d := s.Devices[0].(*server.Device)
	fail := func(name string) { t.Errorf("%s called", name) }
	d.GetRemappedRowsFunc = func() (int, int, bool, bool, gonvml.Return) { fail("remapped rows"); return 0, 0, false, false, 0 }
	d.GetGpuFabricInfoFunc = func() (gonvml.GpuFabricInfo, gonvml.Return) { fail("fabric"); return gonvml.GpuFabricInfo{}, 0 }
	d.GetMemoryInfo_v2Func = func() (gonvml.Memory_v2, gonvml.Return) { fail("memory v2"); return gonvml.Memory_v2{}, 0 }
	d.GetGpuMaxPcieLinkGenerationFunc = func() (int, gonvml.Return) { fail("GPU max generation"); return 0, 0 }
	d.GetCurrentClocksEventReasonsFunc = func() (uint64, gonvml.Return) { fail("event reasons"); return 0, 0 }
	// Drivers before R535 name the same bits throttle reasons.
	d.GetCurrentClocksThrottleReasonsFunc = func() (uint64, gonvml.Return) { return gonvml.ClocksThrottleReasonHwSlowdown, gonvml.SUCCESS }

	h := health(s, d)
	for _, k := range []string{"remappedRows", "fabric", "memory", "pcie.gpuMaxGeneration"} {
		if !slices.Contains(h.Unsupported, k) {
			t.Errorf("%s not unsupported: %v", k, h.Unsupported)
		}
	}
	if !slices.Equal(h.ClockEvents, []string{facts.ClockHWSlowdown}) {
		t.Errorf("clock events %v from the throttle-reasons call", h.ClockEvents)
	}
}

func TestHealthCountsActiveAndInactiveNVLinksUpToTheLast(t *testing.T) {
	s := dgxH100(t)
	d := s.Devices[0].(*server.Device)
	calls := 0
	d.GetNvLinkStateFunc = func(l int) (gonvml.EnableState, gonvml.Return) {
		calls++
		switch {
		case l >= 18:
			return 0, gonvml.ERROR_INVALID_ARGUMENT
		case l == 3 || l == 11:
			return gonvml.FEATURE_DISABLED, gonvml.SUCCESS
		}
		return gonvml.FEATURE_ENABLED, gonvml.SUCCESS
	}
	h := health(s, d)
	if h.NVLink == nil || h.NVLink.Active != 16 || !slices.Equal(h.NVLink.Inactive, []int{3, 11}) {
		t.Errorf("nvlink %+v", h.NVLink)
	}
	if calls != 19 {
		t.Errorf("%d NVLink calls, want 19: the links and the one past the last", calls)
	}
}

func TestHealthKeepsAtMostMaxProcesses(t *testing.T) {
	s := dgxH100(t)
	d := s.Devices[0].(*server.Device)
	d.GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) {
		ps := make([]gonvml.ProcessInfo, 20)
		for i := range ps {
			ps[i] = gonvml.ProcessInfo{Pid: uint32(1000 + i), UsedGpuMemory: 1 << 30}
		}
		ps[0].UsedGpuMemory = ^uint64(0) // NVML_VALUE_NOT_AVAILABLE
		return ps, gonvml.SUCCESS
	}
	p := health(s, d).Processes
	if p == nil || p.Count != 20 || len(p.First) != facts.MaxProcesses || p.First[0] != (facts.Process{PID: 1000}) || p.First[1].UsedBytes != 1<<30 {
		t.Errorf("processes %+v", p)
	}
}

func TestHealthNamesTheFabricStateAndStatus(t *testing.T) {
	s := dgxH100(t)
	d := s.Devices[0].(*server.Device)
	for _, tt := range []struct {
		state  uint8
		status uint32
		want   *facts.Fabric
	}{
		{gonvml.GPU_FABRIC_STATE_NOT_STARTED, 0, &facts.Fabric{State: facts.FabricNotStarted}},
		{gonvml.GPU_FABRIC_STATE_IN_PROGRESS, 0, &facts.Fabric{State: facts.FabricInProgress}},
		{gonvml.GPU_FABRIC_STATE_COMPLETED, uint32(gonvml.ERROR_NOT_SUPPORTED), &facts.Fabric{State: facts.FabricCompleted, Status: 3, StatusText: "Not Supported"}},
		{gonvml.GPU_FABRIC_STATE_NOT_SUPPORTED, 0, nil},
	} {
		d.GetGpuFabricInfoFunc = func() (gonvml.GpuFabricInfo, gonvml.Return) {
			return gonvml.GpuFabricInfo{State: tt.state, Status: tt.status, CliqueId: 0}, gonvml.SUCCESS
		}
		h := health(s, d)
		if tt.want == nil {
			if h.Fabric != nil || !slices.Contains(h.Unsupported, "fabric") {
				t.Errorf("state %d: %+v, unsupported %v", tt.state, h.Fabric, h.Unsupported)
			}
			continue
		}
		if h.Fabric == nil || h.Fabric.State != tt.want.State || h.Fabric.Status != tt.want.Status || h.Fabric.StatusText != tt.want.StatusText {
			t.Errorf("state %d: %+v, want %+v", tt.state, h.Fabric, tt.want)
		}
	}
}

// The mask's fields as nvml.h lays them out: two bits each from 0, the
// incorrect-configuration field four bits at 8.
func TestFabricDegradedReadsEachFieldOfTheHealthMask(t *testing.T) {
	const healthy = 2 | 2<<2 | 2<<4 | 2<<6 | 1<<8 | 1<<12 | 1<<14
	for _, tt := range []struct {
		mask uint32
		want []string
	}{
		{0, nil},
		{healthy, nil},
		{healthy&^3 | 1, []string{facts.FabricHealthDegradedBandwidth}},
		{healthy&^(3<<4) | 1<<4, []string{facts.FabricHealthRouteUnhealthy}},
		{1<<2 | 1<<6, []string{facts.FabricHealthRouteRecovery, facts.FabricHealthAccessTimeoutRecovery}},
		{healthy&^(0xf<<8) | 5<<8, []string{facts.FabricHealthIncorrectConfiguration}},
	} {
		if got := fabricDegraded(tt.mask); !slices.Equal(got, tt.want) {
			t.Errorf("mask %#x: %v, want %v", tt.mask, got, tt.want)
		}
	}
}

// Lines of /proc/self/maps as proc(5) shows them: the path from the sixth
// field, padded after the inode.
func TestMappedLibraryFindsLibnvidiaMLAndItsVersion(t *testing.T) {
	maps := strings.Join([]string{
		"00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus-daemon",
		"7f2c4a000000-7f2c4a021000 rw-p 00000000 00:00 0 ",
		"7f2c4b200000-7f2c4b3e5000 r-xp 00000000 fd:01 1049176                    /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.247.01",
		"7ffd2e5c8000-7ffd2e5e9000 rw-p 00000000 00:00 0                          [stack]",
	}, "\n")
	path := mappedLibrary(strings.NewReader(maps))
	if path != "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.247.01" || libraryVersion(path) != "535.247.01" {
		t.Errorf("path %q version %q", path, libraryVersion(path))
	}
	for name, want := range map[string]string{
		"libnvidia-ml.so.1": "", "libnvidia-ml.so.570.26": "570.26", "libnvidia-ml.so": "", "libnvidia-ml.so.1.2": "",
	} {
		if got := libraryVersion("/lib/" + name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	if p := mappedLibrary(strings.NewReader("00400000-00452000 r-xp 00000000 08:02 1 /usr/bin/x\n")); p != "" {
		t.Errorf("found %q in maps without libnvidia-ml", p)
	}
}

// Lines of /proc/self/mountinfo as proc(5) shows them; the toolkit's
// injected files are bind mounts of their own.
func TestIsMountPointFindsTheToolkitsBindMount(t *testing.T) {
	mountinfo := strings.Join([]string{
		"1094 1060 0:84 / / rw,relatime master:304 - overlay overlay rw,lowerdir=/var/lib/docker/overlay2/l/A",
		"1130 1094 253:1 /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.183.01 /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.183.01 ro,nosuid,nodev,relatime master:1 - ext4 /dev/mapper/root rw",
		`1131 1094 253:1 /srv/a\040b /opt/a\040b ro - ext4 /dev/sda1 rw`,
	}, "\n")
	for path, want := range map[string]bool{
		"/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.183.01": true,
		"/opt/a b": true,
		"/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1": false,
		"/opt/a\\040b": false,
	} {
		if got := isMountPoint(strings.NewReader(mountinfo), path); got != want {
			t.Errorf("%q: %v, want %v", path, got, want)
		}
	}
}

func FuzzMappedLibrary(f *testing.F) {
	f.Add("7f2c4b200000-7f2c4b3e5000 r-xp 00000000 fd:01 1049176                    /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.247.01\n")
	f.Add("7f2c4b200000-7f2c4b3e5000 r-xp 00000000 fd:01 1049176 /tmp/libnvidia-ml.so.550.54.15 (deleted)\n")
	f.Fuzz(func(t *testing.T, maps string) {
		if p := mappedLibrary(strings.NewReader(maps)); p != "" && !strings.Contains(maps, p) {
			t.Errorf("path %q is not in the input", p)
		}
	})
}

func FuzzIsMountPoint(f *testing.F) {
	f.Add("1130 1094 253:1 /lib/libnvidia-ml.so.535.183.01 /usr/lib/libnvidia-ml.so.535.183.01 ro - ext4 /dev/root rw\n", "/usr/lib/libnvidia-ml.so.535.183.01")
	f.Add(`1131 1094 253:1 /srv/a\040b /opt/a\040b\ ro - ext4 /dev/sda1 rw`, "/opt/a b")
	f.Fuzz(func(t *testing.T, mountinfo, path string) {
		isMountPoint(strings.NewReader(mountinfo), path)
		unescapeMount(path)
	})
}
