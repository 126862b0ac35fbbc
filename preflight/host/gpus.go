package host

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/internal/truncate"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// ParseGPUInformation reads one /proc/driver/nvidia/gpus/<bus id>/information
// file, "Key: \t value" lines (open-gpu-kernel-modules kernel-open/nvidia/nv-procfs.c,
// nv_procfs_read_gpu_info). A UUID not read yet is left out and unreadable
// values print as "??.??": both leave the field empty. The GPU is filled as
// far as the data allows; err is set for a malformed field or no known one.
func ParseGPUInformation(data []byte) (facts.GPU, error) {
	var g facts.GPU
	known := 0
	var errs []error
	for line := range strings.SplitSeq(string(data), "\n") {
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if placeholder(value) {
			value = ""
		}
		switch key {
		case "Model":
			g.Name = value
		case "GPU UUID":
			g.UUID = value
		case "Bus Location":
			g.PCIBusID = ""
			if value != "" {
				id, err := NormalizeBusID(value)
				if err != nil {
					errs = append(errs, err)
				}
				g.PCIBusID = id
			}
		default:
			continue
		}
		known++
	}
	if known == 0 {
		return g, errors.New("no Model, GPU UUID or Bus Location line: not an NVIDIA GPU information file")
	}
	return g, errors.Join(errs...)
}

// Excluded reports whether an information file says "GPU Excluded: Yes"
// (NVreg_ExcludedGpus): neither NVML nor CUDA will use it.
func Excluded(data []byte) bool {
	for line := range strings.SplitSeq(string(data), "\n") {
		key, value, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(key) == "GPU Excluded" {
			return strings.TrimSpace(value) == "Yes"
		}
	}
	return false
}

func placeholder(v string) bool {
	return strings.Contains(v, "?") && strings.Trim(v, "?.-: ") == ""
}

// NormalizeBusID turns a PCI address as procfs and sysfs print it
// ("0000:3b:00.0") into NVML's nvmlPciInfo_t.busId form ("00000000:3B:00.0"),
// so facts from either compare equal. A missing domain means 0.
func NormalizeBusID(s string) (string, error) {
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("PCI bus id %s: %s (want domain:bus:device.function, e.g. 0000:3b:00.0)", truncate.Quote(s, truncate.MessageBytes), why)
	}
	parts := strings.Split(strings.TrimSpace(s), ":")
	var domain string
	switch len(parts) {
	case 3:
		domain, parts = parts[0], parts[1:]
	case 2:
		domain = "0"
	default:
		return bad("wrong number of colons")
	}
	dev, fn, ok := strings.Cut(parts[1], ".")
	if !ok {
		return bad("no function number")
	}
	d, err1 := hexField(domain, 8, math.MaxUint32)
	b, err2 := hexField(parts[0], 2, 0xff)
	v, err3 := hexField(dev, 2, 0x1f)
	f, err4 := hexField(fn, 1, 7)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return bad(err.Error())
	}
	return fmt.Sprintf("%08X:%02X:%02X.%X", d, b, v, f), nil
}

func hexField(s string, digits int, max uint64) (uint64, error) {
	if s == "" || len(s) > digits {
		return 0, fmt.Errorf("field %s must be 1 to %d hex digits", truncate.Quote(s, truncate.MessageBytes), digits)
	}
	n, err := strconv.ParseUint(s, 16, 64)
	if err != nil || n > max {
		return 0, fmt.Errorf("field %q is not a hex number <= %#x", s, max)
	}
	return n, nil
}
