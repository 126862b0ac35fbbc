//go:build embedprobe

package nvml

import _ "embed"

// embedded is the NVML probe, built in the bullseye root and copied here by
// `make build` (mk/probe.mk); the file is git-ignored.
//
//go:embed gpu-preflight-nvml.bin
var embedded []byte
