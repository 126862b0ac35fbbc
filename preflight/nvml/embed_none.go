//go:build !embedprobe

package nvml

// embedded is empty without the embedprobe tag; Probe falls back to a probe file.
var embedded []byte
