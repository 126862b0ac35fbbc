//go:build !embedprobe

package nvml

// embedded is empty without the embedprobe tag: `go build ./...` works on a
// fresh clone, and Probe falls back to a probe file.
var embedded []byte
