package compat

// Toolkits returns the CUDA toolkit versions the driver table knows, oldest
// first: the versions advise lists.
func Toolkits() []string {
	out := make([]string, len(toolkitDriver))
	for i, row := range toolkitDriver {
		out[i] = row.CUDA
	}
	return out
}

// Branches returns the driver branches the branch table knows, oldest first.
func Branches() []int {
	out := make([]int, len(branchCUDA))
	for i, row := range branchCUDA {
		out[i] = row.Branch
	}
	return out
}

// computeCapabilities are NVIDIA GPUs' compute capabilities, oldest first.
// Source: NVIDIA "CUDA GPU Compute Capability" (developer.nvidia.com/cuda-gpus),
// the CUDA Programming Guide; 8.8, 10.3, 10.7, 11.0 and 12.1 from the CUDA
// 12.9-13.4 release notes' target lists.
var computeCapabilities = []string{
	"3.0", "3.2", "3.5", "3.7", "5.0", "5.2", "5.3", "6.0", "6.1", "6.2", "7.0", "7.2", "7.5",
	"8.0", "8.6", "8.7", "8.8", "8.9", "9.0", "10.0", "10.3", "10.7", "11.0", "12.0", "12.1",
}

// ComputeCapabilities returns the compute capabilities of NVIDIA GPUs, oldest first.
func ComputeCapabilities() []string {
	return append([]string(nil), computeCapabilities...)
}
