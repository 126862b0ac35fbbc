// Package scenarios holds the nodes the checks are tested on, so tests
// elsewhere (test/examples) judge the same nodes.
package scenarios

import "github.com/gpu-preflight/gpu-preflight/preflight/facts"

// Node is one host: a driver, the CUDA version it reports, and its GPUs.
type Node struct {
	Name string
	Host facts.Host
}

// Host is a host with the driver reporting CUDA version cuda, and gpus.
func Host(driver, cuda string, gpus ...facts.GPU) facts.Host {
	return facts.Host{Driver: facts.Driver{Version: driver, CUDAVersion: cuda, Source: facts.DriverFromProcfs}, GPUs: gpus}
}

// GPUs are n GPUs of one model, brand and compute capability.
func GPUs(n int, name, brand, cc string) []facts.GPU {
	var out []facts.GPU
	for i := 0; i < n; i++ {
		out = append(out, facts.GPU{Index: i, Name: name, Brand: brand, ComputeCapability: cc})
	}
	return out
}

// Nodes are the hosts of the check and require tests, with the data-center
// and consumer GPUs of each generation.
var Nodes = []Node{
	{"V100-R450.51", Host("450.51.06", "11.0", GPUs(1, "Tesla V100-SXM2-32GB", "Tesla", "7.0")...)},
	{"V100-R450.80", Host("450.80.02", "11.0", GPUs(1, "Tesla V100-SXM2-32GB", "Tesla", "7.0")...)},
	{"A100-R450.80", Host("450.80.02", "11.0", GPUs(1, "NVIDIA A100-SXM4-40GB", "Nvidia", "8.0")...)},
	{"V100-R470", Host("470.57.02", "11.4", GPUs(1, "Tesla V100-SXM2-32GB", "Tesla", "7.0")...)},
	{"RTX3090-R470", Host("470.57.02", "11.4", GPUs(1, "NVIDIA GeForce RTX 3090", "GeForce", "8.6")...)},
	{"A100-R470", Host("470.57.02", "11.4", GPUs(1, "NVIDIA A100-SXM4-40GB", "Nvidia", "8.0")...)},
	{"A100-R515", Host("515.65.01", "11.7", GPUs(1, "NVIDIA A100-SXM4-40GB", "Nvidia", "8.0")...)},
	{"A100-R525", Host("525.60.13", "12.0", GPUs(1, "NVIDIA A100-SXM4-40GB", "Nvidia", "8.0")...)},
	{"RTX3090-R525", Host("525.60.13", "12.0", GPUs(1, "NVIDIA GeForce RTX 3090", "GeForce", "8.6")...)},
	{"A100-R530", Host("530.30.02", "12.1", GPUs(1, "NVIDIA A100-SXM4-40GB", "Nvidia", "8.0")...)},
	{"H100-R535", Host("535.129.03", "12.2", GPUs(8, "NVIDIA H100 80GB HBM3", "Nvidia", "9.0")...)},
	{"H100-R535.54", Host("535.54.03", "12.2", GPUs(8, "NVIDIA H100 80GB HBM3", "Nvidia", "9.0")...)},
	{"RTX4090-R535", Host("535.129.03", "12.2", GPUs(2, "NVIDIA GeForce RTX 4090", "GeForceRTX", "8.9")...)},
	{"T4-R535", Host("535.129.03", "12.2", GPUs(1, "Tesla T4", "Tesla", "7.5")...)},
	{"QuadroRTX-R535", Host("535.129.03", "12.2", GPUs(1, "Quadro RTX 8000", "QuadroRTX", "7.5")...)},
	{"H100-R545", Host("545.23.08", "12.3", GPUs(8, "NVIDIA H100 80GB HBM3", "Nvidia", "9.0")...)},
	{"H100-R550", Host("550.54.15", "12.4", GPUs(8, "NVIDIA H100 80GB HBM3", "Nvidia", "9.0")...)},
	{"RTX4090-R550", Host("550.54.15", "12.4", GPUs(1, "NVIDIA GeForce RTX 4090", "GeForceRTX", "8.9")...)},
	{"H100-R560", Host("560.35.03", "12.6", GPUs(1, "NVIDIA H100 80GB HBM3", "Nvidia", "9.0")...)},
	{"RTX4090-R570", Host("570.124.06", "12.8", GPUs(1, "NVIDIA GeForce RTX 4090", "GeForceRTX", "8.9")...)},
	{"B200-R570", Host("570.124.06", "12.8", GPUs(8, "NVIDIA B200", "Nvidia", "10.0")...)},
	{"RTX5090-R570.86", Host("570.86.10", "12.8", GPUs(1, "NVIDIA GeForce RTX 5090", "GeForceRTX", "12.0")...)},
	{"RTX5090-R570-two-part", Host("570.26", "12.8", GPUs(1, "NVIDIA GeForce RTX 5090", "GeForceRTX", "12.0")...)},
	{"H100-R575", Host("575.57.08", "12.9", GPUs(1, "NVIDIA H100 80GB HBM3", "Nvidia", "9.0")...)},
	{"RTX4090-R575", Host("575.57.08", "12.9", GPUs(1, "NVIDIA GeForce RTX 4090", "GeForceRTX", "8.9")...)},
	{"B200-R580", Host("580.65.06", "13.0", GPUs(8, "NVIDIA B200", "Nvidia", "10.0")...)},
	{"V100-R580", Host("580.65.06", "13.0", GPUs(1, "Tesla V100-SXM2-32GB", "Tesla", "7.0")...)},
	{"RTX4090-R580", Host("580.65.06", "13.0", GPUs(1, "NVIDIA GeForce RTX 4090", "GeForceRTX", "8.9")...)},
	{"Thor-R580", Host("580.95.05", "13.0", GPUs(1, "NVIDIA Jetson Thor", "Nvidia", "11.0")...)},
	{"B300-R595", Host("595.45.04", "13.2", GPUs(8, "NVIDIA B300", "Nvidia", "10.3")...)},
	{"H100-R610", Host("610.43.02", "13.3", GPUs(1, "NVIDIA H100 80GB HBM3", "Nvidia", "9.0")...)},
	{"GB10-R615", Host("615.71.09", "13.4", GPUs(1, "NVIDIA GB10", "Nvidia", "12.1")...)},
	{"H200-R620", Host("620.70.06", "13.5", GPUs(8, "NVIDIA H200", "Nvidia", "9.0")...)},
}
