package check

import (
	"fmt"

	"github.com/gpu-preflight/gpu-preflight/preflight/version"
)

func cudaAssumed(in Input) bool { return in.Facts.Host.Driver.CUDAAssumed() }

func assumedNote(in Input) string {
	d := in.Facts.Host.Driver
	return fmt.Sprintf("CUDA %s is assumed: branch %d of driver %s is not in gpu-preflight's table, so it is taken to support what the branch below does",
		d.CUDAVersion, version.Major(d.Version), d.Version)
}

// onAGuess notes a verdict that rests on an assumed driver CUDA version
// (a branch missing from the table, facts.CUDAAssumed) and turns its error
// into a warning: a guessed number never aborts a job on its own.
func onAGuess(in Input, status Status, message, remedy string) (Status, string, string) {
	if !cudaAssumed(in) || status == Skip {
		return status, message, remedy
	}
	if status != Error {
		return status, message + " (" + assumedNote(in) + ")", remedy
	}
	return Warn, message + " (" + assumedNote(in) + "; a guess does not abort the run)",
		"check the driver's CUDA version (nvidia-smi prints it); if it is below what the image needs: " + remedy
}
