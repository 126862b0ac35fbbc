package fakecuda

import (
	"slices"
	"strings"
	"testing"
)

// The fake defines exactly the entry points the probe resolves: no more,
// so a call the probe makes without resolving it cannot pass here and
// fail on the real library; no less, so every path is playable.
func TestFakeDefinesExactlyWhatTheProbeResolves(t *testing.T) {
	lib, err := Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	exports, err := Exports(lib)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ProbeSymbols()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(exports)
	slices.Sort(want)
	if !slices.Equal(exports, want) {
		t.Errorf("the fake exports %v\nthe probe resolves %v", exports, want)
	}
	for _, v2 := range []string{"cuMemGetInfo_v2", "cuMemAlloc_v2", "cuMemFree_v2", "cuMemcpyDtoH_v2", "cuDeviceTotalMem_v2", "cuDevicePrimaryCtxRelease_v2", "cuDeviceGetUuid_v2"} {
		if !slices.Contains(want, v2) {
			t.Errorf("the probe does not resolve %s, the name cuda.h calls", v2)
		}
	}
}

func TestScenarioText(t *testing.T) {
	s := OK(2, H100).Fail("launch", 719, 1).WrongValue(0)
	text := s.Text()
	for _, line := range []string{"init ok\n", "version 12040\n", "count 2\n", "1 launch 719\n", "0 value wrong\n", "0 cc 9 0\n"} {
		if !strings.Contains(text, line) {
			t.Errorf("scenario text lacks %q:\n%s", line, text)
		}
	}
	if strings.Contains(text, "0 launch") {
		t.Errorf("Fail(…, 1) scripted device 0 too:\n%s", text)
	}
}
