package check

import (
	"fmt"

	"github.com/gpu-preflight/gpu-preflight/preflight/version"
)

// A driver whose branch is not in the branch table gets the CUDA version of
// the branch below (facts.CUDAAssumed). A verdict that turns on that guess
// says so, and an error becomes a warning: a guessed number never aborts a
// job on its own.

// cudaAssumed reports whether the driver's CUDA version is a guess.
func cudaAssumed(in Input) bool { return in.Facts.Host.Driver.CUDAAssumed() }

// assumedNote is what a finding built on the guess adds to its message.
func assumedNote(in Input) string {
	d := in.Facts.Host.Driver
	return fmt.Sprintf("CUDA %s is assumed: branch %d of driver %s is not in gpu-preflight's table, so it is taken to support what the branch below does",
		d.CUDAVersion, version.Major(d.Version), d.Version)
}

// onAGuess adds the assumed note to a verdict that rests on the driver's
// CUDA version when that version is assumed, and turns an error into a
// warning: a guess does not abort the run.
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
