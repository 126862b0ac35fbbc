//go:build embedprobe && amd64

package nvml

import _ "embed"

// embedded is the linux/amd64 probe, copied here (git-ignored) by mk/probe.mk.
//
//go:embed gpu-preflight-nvml-amd64.bin
var embedded []byte
