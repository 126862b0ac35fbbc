package host

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/internal/truncate"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
)

// Cgroup file formats: the kernel's Documentation/admin-guide/cgroup-v2.rst
// and cgroup-v1/memory.rst, scheduler/sched-bwc.rst.

// defaultCFSPeriod is the kernel's default CFS period in microseconds
// (sched-bwc.rst), for a cpu.max that holds only a quota.
const defaultCFSPeriod = 100000

// v1Unlimited: cgroup v1 prints "no limit" as the largest page-aligned
// counter, which depends on the page size; 2^62 and above is unlimited.
const v1Unlimited = 1 << 62

// ParseMemoryMax parses cgroup v2 memory.max; "max" (unlimited) is 0.
func ParseMemoryMax(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	if s == "max" {
		return 0, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf(`memory.max %s: want "max" or a byte count`, truncate.Quote(s, truncate.MessageBytes))
	}
	return n, nil
}

// ParseCPUMax parses cgroup v2 cpu.max, "$MAX $PERIOD" ("200000 100000" is
// 2), into CPUs; 0 when unlimited.
func ParseCPUMax(s string) (float64, error) {
	f := strings.Fields(s)
	if len(f) < 1 || len(f) > 2 {
		return 0, fmt.Errorf(`cpu.max %s: want "max|QUOTA [PERIOD]"`, truncate.Quote(s, truncate.MessageBytes))
	}
	if f[0] == "max" {
		return 0, nil
	}
	quota, err := strconv.ParseUint(f[0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf(`cpu.max %s: quota is not "max" or a number`, truncate.Quote(s, truncate.MessageBytes))
	}
	period := uint64(defaultCFSPeriod)
	if len(f) == 2 {
		period, err = strconv.ParseUint(f[1], 10, 64)
		if err != nil || period == 0 {
			return 0, fmt.Errorf("cpu.max %s: period is not a positive number", truncate.Quote(s, truncate.MessageBytes))
		}
	}
	return float64(quota) / float64(period), nil
}

// ParseMemoryLimitInBytes parses cgroup v1 memory.limit_in_bytes; 0 when unlimited.
func ParseMemoryLimitInBytes(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	if s == "-1" {
		return 0, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("memory.limit_in_bytes %s: not a byte count", truncate.Quote(s, truncate.MessageBytes))
	}
	if n >= v1Unlimited {
		return 0, nil
	}
	return n, nil
}

// ParseCFSQuota parses cgroup v1 cpu.cfs_quota_us and cpu.cfs_period_us
// into CPUs; 0 when unlimited (a negative quota).
func ParseCFSQuota(quota, period string) (float64, error) {
	q, err := strconv.ParseInt(strings.TrimSpace(quota), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("cpu.cfs_quota_us %s: not a number", truncate.Quote(quota, truncate.MessageBytes))
	}
	if q < 0 {
		return 0, nil
	}
	p, err := strconv.ParseUint(strings.TrimSpace(period), 10, 64)
	if err != nil || p == 0 {
		return 0, fmt.Errorf("cpu.cfs_period_us %s: not a positive number", truncate.Quote(period, truncate.MessageBytes))
	}
	return float64(q) / float64(p), nil
}

// parseProcCgroup reads /proc/self/cgroup: "0::/path" for the v2 unified
// hierarchy, "N:ctrl1,ctrl2:/path" for v1 hierarchies.
func parseProcCgroup(data []byte) (unified string, v1 map[string]string) {
	v1 = map[string]string{}
	for line := range strings.SplitSeq(string(data), "\n") {
		f := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(f) != 3 || !strings.HasPrefix(f[2], "/") {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			unified = f[2]
			continue
		}
		for c := range strings.SplitSeq(f[1], ",") {
			if c != "" {
				v1[c] = f[2]
			}
		}
	}
	return unified, v1
}

// ancestors lists the cgroup directories from the process's own up to the
// mount's top: a parent's limit (a pod, a Slurm job) binds too. Where the
// own path is not under the mount (a cgroup namespace, v1 Docker), only the
// top remains, and it is the container's.
func ancestors(mount, own string) []string {
	dirs := []string{}
	for p := path.Clean("/" + own); ; p = path.Dir(p) {
		dirs = append(dirs, path.Join(mount, p))
		if p == "/" {
			return dirs
		}
	}
}

// gatherCgroup reads the tightest memory and CPU limits along ancestors.
func gatherCgroup(root fsroot.Root) (facts.Cgroup, []string) {
	var cg facts.Cgroup
	var warns []string
	var unified string
	v1 := map[string]string{}
	if data, err := root.ReadFileMax("/proc/self/cgroup", maxTextFile); err == nil {
		unified, v1 = parseProcCgroup(data)
	} else if !fsroot.Missing(err) {
		warns = append(warns, fmt.Sprintf("cgroup: %v", err))
	}
	read := func(p string) (string, bool) {
		data, err := root.ReadFileMax(p, maxTextFile)
		if err != nil {
			if !fsroot.Missing(err) {
				warns = append(warns, fmt.Sprintf("cgroup: %v", err))
			}
			return "", false
		}
		return string(data), true
	}
	tighterMem := func(n uint64) {
		if n != 0 && (cg.MemoryBytes == 0 || n < cg.MemoryBytes) {
			cg.MemoryBytes = n
		}
	}
	tighterCPU := func(c float64) {
		if c != 0 && (cg.CPUs == 0 || c < cg.CPUs) {
			cg.CPUs = c
		}
	}
	if exists(root, "/sys/fs/cgroup/cgroup.controllers") {
		cg.Version = 2
		for _, dir := range ancestors("/sys/fs/cgroup", unified) {
			if s, ok := read(dir + "/memory.max"); ok {
				n, err := ParseMemoryMax(s)
				if err != nil {
					warns = append(warns, fmt.Sprintf("cgroup: %s: %v", dir, err))
				}
				tighterMem(n)
			}
			if s, ok := read(dir + "/cpu.max"); ok {
				c, err := ParseCPUMax(s)
				if err != nil {
					warns = append(warns, fmt.Sprintf("cgroup: %s: %v", dir, err))
				}
				tighterCPU(c)
			}
		}
		return cg, warns
	}
	hasMem, hasCPU := exists(root, "/sys/fs/cgroup/memory"), exists(root, "/sys/fs/cgroup/cpu")
	if !hasMem && !hasCPU {
		return cg, warns
	}
	cg.Version = 1
	if hasMem {
		for _, dir := range ancestors("/sys/fs/cgroup/memory", v1["memory"]) {
			if s, ok := read(dir + "/memory.limit_in_bytes"); ok {
				n, err := ParseMemoryLimitInBytes(s)
				if err != nil {
					warns = append(warns, fmt.Sprintf("cgroup: %s: %v", dir, err))
				}
				tighterMem(n)
			}
		}
	}
	if hasCPU {
		for _, dir := range ancestors("/sys/fs/cgroup/cpu", v1["cpu"]) {
			q, okQ := read(dir + "/cpu.cfs_quota_us")
			p, okP := read(dir + "/cpu.cfs_period_us")
			if okQ && okP {
				c, err := ParseCFSQuota(q, p)
				if err != nil {
					warns = append(warns, fmt.Sprintf("cgroup: %s: %v", dir, err))
				}
				tighterCPU(c)
			}
		}
	}
	return cg, warns
}
