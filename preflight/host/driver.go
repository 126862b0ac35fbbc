package host

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/internal/truncate"
	"github.com/gpu-preflight/gpu-preflight/preflight/version"
)

// ParseDriverVersion reads the driver version out of
// /proc/driver/nvidia/version, the first dotted number after "Kernel Module":
//
//	NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023
//	NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build  ...
//
// open is true for the open GPU kernel module.
func ParseDriverVersion(data []byte) (ver string, open bool, err error) {
	for line := range strings.SplitSeq(string(data), "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "NVRM version:")
		if !ok {
			continue
		}
		open = strings.Contains(rest, "Open Kernel Module")
		if _, after, found := strings.Cut(rest, "Kernel Module"); found {
			rest = after
		}
		for _, field := range strings.Fields(rest) {
			if isDriverVersion(field) {
				return field, open, nil
			}
		}
		return "", false, fmt.Errorf("NVRM version line %s holds no dotted driver version", truncate.Quote(line, truncate.MessageBytes))
	}
	return "", false, errors.New(`no "NVRM version:" line: not an NVIDIA driver version file`)
}

// isDriverVersion accepts "535.129.03", "570.26": digits and dots, at least
// one dot, every component small enough for version.Compare.
func isDriverVersion(s string) bool {
	if !version.Valid(s) || s == "" || !strings.Contains(s, ".") || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	_, err := version.Compare(s, s) // Compare(s, s) walks every component
	return err == nil
}
