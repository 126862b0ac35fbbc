package nvml

import "github.com/gpu-preflight/gpu-preflight/preflight/facts"

// Embedded reports whether this binary carries the probe.
func Embedded() bool { return len(embedded) > 0 }

// Apply records a probe run in host. host.NVML always gets r.NVML. When NVML
// answered, its driver version, CUDA version and GPUs replace what procfs
// said (NVML knows brand, compute capability and modes; procfs does not),
// and host.Driver.Source says how the probe ran. Otherwise the procfs facts
// stand.
func Apply(host *facts.Host, r Result) {
	host.NVML = r.NVML
	d := r.Document
	if d == nil || d.Outcome != facts.ProbeOK {
		return
	}
	host.Driver.Source = facts.DriverFromNVMLFile
	if r.NVML.Via == "memfd" {
		host.Driver.Source = facts.DriverFromNVMLMemfd
	}
	if d.DriverVersion != "" {
		host.Driver.Version = d.DriverVersion
	}
	if d.CUDAVersion != "" {
		host.Driver.CUDAVersion = d.CUDAVersion
		host.Driver.CUDAVersionSource = facts.CUDAFromNVML
	}
	host.GPUs = append([]facts.GPU(nil), d.GPUs...)
}
