package nvml

import (
	"reflect"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

func procfsHost() facts.Host {
	return facts.Host{
		Driver: facts.Driver{Version: "550.54.15", CUDAVersion: "12.4", CUDAVersionSource: "branch-table", Source: "procfs"},
		GPUs:   []facts.GPU{{Index: 0, Name: "from procfs"}},
	}
}

func TestApplyReplacesProcfsFactsWhenNVMLAnswered(t *testing.T) {
	doc := &Document{Outcome: facts.ProbeOK, DriverVersion: "550.54.15", CUDAVersion: "12.4", NVMLVersion: "12.550.54.15",
		GPUs: []facts.GPU{{Index: 0, Brand: "Nvidia", ComputeCapability: "9.0"}, {Index: 1, Brand: "Nvidia", ComputeCapability: "9.0"}}}
	for via, source := range map[string]string{"memfd": "nvml-memfd", "file:/usr/local/bin/gpu-preflight-nvml": "nvml-file"} {
		host := procfsHost()
		r := Result{Document: doc, NVML: facts.NVML{Outcome: facts.ProbeOK, Via: via, Version: doc.NVMLVersion}}
		Apply(&host, r)
		if host.Driver.Source != source || host.Driver.CUDAVersionSource != "nvml" || host.Driver.CUDAVersion != "12.4" {
			t.Errorf("via %s: driver = %+v, want source %s", via, host.Driver, source)
		}
		if !reflect.DeepEqual(host.GPUs, doc.GPUs) || host.NVML != r.NVML {
			t.Errorf("via %s: GPUs %+v NVML %+v", via, host.GPUs, host.NVML)
		}
	}
}

func TestApplyKeepsProcfsFactsWhenNVMLFieldsFailed(t *testing.T) {
	host := procfsHost()
	doc := &Document{Outcome: facts.ProbeOK, Errors: map[string]string{"driverVersion": "Unknown Error", "cudaVersion": "v2: x; v1: y"}, GPUs: []facts.GPU{}}
	Apply(&host, Result{Document: doc, NVML: facts.NVML{Outcome: facts.ProbeOK, Via: "memfd"}})
	if host.Driver.Version != "550.54.15" || host.Driver.CUDAVersionSource != "branch-table" {
		t.Errorf("driver = %+v, want procfs version and table CUDA kept", host.Driver)
	}
}

func TestApplyOnlyRecordsAFailedProbe(t *testing.T) {
	for _, outcome := range []string{facts.ProbeTimeout, facts.ProbeDriverNotLoaded, facts.ProbeLibraryNotFound, facts.ProbeUnavailable} {
		host := procfsHost()
		r := Result{NVML: facts.NVML{Outcome: outcome, Error: "x"}}
		if outcome == facts.ProbeDriverNotLoaded {
			r.Document = &Document{Outcome: outcome}
		}
		Apply(&host, r)
		want := procfsHost()
		want.NVML = r.NVML
		if !reflect.DeepEqual(host, want) {
			t.Errorf("%s: host = %+v, want procfs facts and the NVML record", outcome, host)
		}
	}
}
