//go:build embedprobe && amd64

package nvml

import _ "embed"

// embedded is the NVML probe for linux/amd64, built against the bullseye
// sysroot and copied here by `make build` or `make dist` (mk/probe.mk); the file is
// git-ignored.
//
//go:embed gpu-preflight-nvml-amd64.bin
var embedded []byte
