package compat

// Toolkits returns the CUDA toolkit versions the driver table knows, oldest
// first ("10.0" ... ): the versions advise lists.
func Toolkits() []string {
	out := make([]string, len(toolkitDriver))
	for i, row := range toolkitDriver {
		out[i] = row.CUDA
	}
	return out
}

// Branches returns the driver branches the branch table knows, oldest
// first (410 ... ).
func Branches() []int {
	out := make([]int, len(branchCUDA))
	for i, row := range branchCUDA {
		out[i] = row.Branch
	}
	return out
}
