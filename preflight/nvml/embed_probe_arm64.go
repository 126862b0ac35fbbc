//go:build embedprobe && arm64

package nvml

import _ "embed"

// embedded is the linux/arm64 probe, copied here (git-ignored) by mk/probe.mk.
//
//go:embed gpu-preflight-nvml-arm64.bin
var embedded []byte
