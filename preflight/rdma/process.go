package rdma

import (
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"strconv"
	"strings"
)

// process reads this process's limits from procfs: the training command
// inherits them through exec (or as gpu-preflight's child).
func (g *gatherer) process() facts.RankProcess {
	p := facts.RankProcess{UID: -1, MemlockSoft: -1, MemlockHard: -1}
	if b, err := g.host.ReadFileMax("/proc/self/status", maxFile); err == nil {
		ParseStatus(string(b), &p)
	} else {
		g.warn(err)
	}
	if b, err := g.host.ReadFileMax("/proc/self/limits", maxFile); err == nil {
		p.MemlockSoft, p.MemlockHard = ParseMemlock(string(b))
	} else {
		g.warn(err)
	}
	return p
}

// ParseStatus reads /proc/self/status (proc(5)): the effective uid, the
// effective, bounding and ambient capability sets (hexadecimal) and
// Cpus_allowed_list.
func ParseStatus(s string, p *facts.RankProcess) {
	for line := range strings.SplitSeq(s, "\n") {
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		fields := strings.Fields(value)
		if len(fields) == 0 {
			continue
		}
		caps := func() uint64 { n, _ := strconv.ParseUint(fields[0], 16, 64); return n }
		switch key {
		case "Uid":
			if len(fields) > 1 {
				if n, err := strconv.Atoi(fields[1]); err == nil {
					p.UID = n
				}
			}
		case "CapEff":
			p.CapEff = caps()
		case "CapBnd":
			p.CapBnd = caps()
		case "CapAmb":
			p.CapAmb = caps()
		case "Cpus_allowed_list":
			p.CPUs = fields[0]
		}
	}
}

// ParseMemlock reads RLIMIT_MEMLOCK from /proc/self/limits (proc(5)): the
// "Max locked memory" row's soft and hard limits in bytes, -1 for
// "unlimited" (and when the row is missing or unreadable).
func ParseMemlock(s string) (soft, hard int64) {
	for line := range strings.SplitSeq(s, "\n") {
		rest, ok := strings.CutPrefix(line, "Max locked memory")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 2 {
			return -1, -1
		}
		return limit(f[0]), limit(f[1])
	}
	return -1, -1
}

func limit(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}
