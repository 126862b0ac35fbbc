package report

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/gpu-preflight/gpu-preflight/preflight/cuda"
	"github.com/gpu-preflight/gpu-preflight/preflight/decision"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/report/termsafe"
)

// Human writes the report `gpu-preflight check` prints: host, image,
// checks and what a run would do, from the redacted record, coloured only
// when termsafe.UseColor(w).
func Human(w io.Writer, r Record) error {
	// Escaped for the terminal on a copy: the record stays as written.
	r, err := printable(r)
	if err != nil {
		return err
	}
	hw := &humanWriter{color: termsafe.UseColor(w)}
	hw.write(r)
	_, err = io.WriteString(w, hw.b.String())
	return err
}

// printable is a deep copy of r with every string escaped by termsafe.
func printable(r Record) (Record, error) {
	b, err := r.AppendJSON(nil)
	if err != nil {
		return Record{}, fmt.Errorf("copy the record for the report: %w", err)
	}
	var c Record
	if err := json.Unmarshal(b, &c); err != nil {
		return Record{}, fmt.Errorf("copy the record for the report: %w", err)
	}
	termsafe.All(&c)
	return c, nil
}

type humanWriter struct {
	b     strings.Builder
	color bool
}

func (h *humanWriter) table(rows [][]string) {
	tw := tabwriter.NewWriter(&h.b, 0, 0, 2, ' ', 0)
	for _, row := range rows {
		fmt.Fprintln(tw, "  "+strings.Join(row, "\t"))
	}
	tw.Flush()
}

// statusTable is table for rows whose first cell is a status, coloured
// after the columns are laid out, so the escape codes take no width.
func (h *humanWriter) statusTable(rows [][]string) {
	var plain strings.Builder
	tw := tabwriter.NewWriter(&plain, 0, 0, 2, ' ', 0)
	for _, row := range rows {
		fmt.Fprintln(tw, "  "+strings.Join(row, "\t"))
	}
	tw.Flush()
	for i, line := range strings.SplitAfter(plain.String(), "\n") {
		if i < len(rows) && h.color && rows[i][0] != "" {
			if c, ok := statusColors[rows[i][0]]; ok {
				line = strings.Replace(line, rows[i][0], c+rows[i][0]+reset, 1)
			}
		}
		h.b.WriteString(line)
	}
}

func (h *humanWriter) write(r Record) {
	b := &h.b
	fmt.Fprintf(b, "gpu-preflight %s (%s)  run %s  %s\n", or(r.Tool.Version, "dev"), or(r.Tool.Commit, "unknown"), r.RunID, r.StartedAt)

	b.WriteString("\nHost\n")
	d := r.Host.Driver
	driver := "none found"
	if d.Version != "" {
		driver = d.Version
		if d.OpenKernelModule {
			driver += " (open kernel module)"
		}
	}
	cuda := or(d.CUDAVersion, "-")
	if d.CUDAVersion != "" && d.CUDAVersionSource != "" {
		cuda += " (from " + d.CUDAVersionSource + ")"
	}
	nvml := or(r.Host.NVML.Outcome, "-")
	if r.Host.NVML.Error != "" {
		nvml += ": " + r.Host.NVML.Error
	}
	cg := "-"
	if r.Host.Cgroup.Version != 0 {
		cg = "v" + strconv.Itoa(r.Host.Cgroup.Version) + ", memory " + bytesOrUnlimited(r.Host.Cgroup.MemoryBytes) + ", CPUs "
		if r.Host.Cgroup.CPUs > 0 {
			cg += strconv.FormatFloat(r.Host.Cgroup.CPUs, 'f', -1, 64)
		} else {
			cg += "unlimited"
		}
	}
	h.table([][]string{
		{"hostname", or(r.Host.Hostname, "-")},
		{"kernel", or(r.Host.Kernel, "-")},
		{"driver", driver + sourceNote(d.Source)},
		{"driver's CUDA", cuda},
		{"NVML", nvml},
		{"CUDA check", cudaSummary(r.Host.CUDA)},
		{"RDMA check", rdmaSummary(r.Host.Transport.Active)},
		{"/dev/shm", bytesOrUnknown(r.Host.ShmBytes)},
		{"cgroup", cg},
	})

	fmt.Fprintf(b, "\nGPUs (%d)\n", len(r.Host.GPUs))
	if len(r.Host.GPUs) == 0 {
		if d.Version == "" && len(r.Host.DeviceNodes) == 0 {
			b.WriteString("  none: no NVIDIA driver on this host\n")
		} else {
			b.WriteString("  none listed by the driver\n")
		}
	} else {
		rows := [][]string{{"INDEX", "NAME", "UUID", "BUS ID", "CC", "MEMORY", "MIG", "PERSISTENCE"}}
		for _, g := range r.Host.GPUs {
			rows = append(rows, []string{strconv.Itoa(g.Index), or(g.Name, "-"), or(g.UUID, "-"), or(g.PCIBusID, "-"),
				or(g.ComputeCapability, "-"), bytesOrUnknown(g.MemoryBytes), or(g.MIGMode, "-"), or(g.PersistenceMode, "-")})
		}
		h.table(rows)
	}

	b.WriteString("\nImage\n")
	im := r.Image
	icuda := or(im.CUDAVersion, "none found")
	if im.CUDAVersionFull != "" && im.CUDAVersionFull != im.CUDAVersion {
		icuda += " (" + im.CUDAVersionFull + ")"
	}
	rows := [][]string{{"CUDA", icuda}}
	for _, q := range im.Requirements {
		rows = append(rows, []string{q.Var, q.Value})
	}
	if im.RequireDisabled {
		rows = append(rows, []string{"NVIDIA_DISABLE_REQUIRE", "true (requirements not enforced)"})
	}
	rows = append(rows,
		[]string{"cuDNN", or(im.CuDNNVersion, "-")},
		[]string{"NCCL", or(im.NCCLVersion, "-")},
		[]string{"TensorRT", or(im.TensorRTVersion, "-")},
		[]string{"Python", pythonSummary(im.Python)},
	)
	for _, c := range im.Compat {
		rows = append(rows, []string{"compat libcuda", c.DriverVersion + " " + c.Path})
	}
	rows = append(rows,
		[]string{"ref", or(im.Ref, "-")},
		[]string{"digest", or(im.Digest, "-")},
		[]string{"revision", or(im.Revision, "-")},
		[]string{"created", or(im.Created, "-")},
	)
	h.table(rows)
	if len(im.Frameworks) > 0 {
		b.WriteString("\nFrameworks\n")
		rows := [][]string{{"NAME", "VERSION", "CUDA", "ARCHS", "ENVIRONMENT"}}
		for _, f := range im.Frameworks {
			archs := append([]string(nil), f.Archs...)
			sort.Strings(archs)
			env := or(f.Environment, "-")
			if f.NotJudged != "" {
				env += " (not judged: " + f.NotJudged + ")"
			}
			rows = append(rows, []string{f.Name, or(f.Version, "-"), or(f.CUDAVersion, buildLabel(f)), or(strings.Join(archs, " "), "-"), env})
		}
		h.table(rows)
	}

	b.WriteString("\nChecks\n")
	if len(r.Checks) == 0 {
		b.WriteString("  none run\n")
	} else {
		rows := [][]string{{"STATUS", "CHECK", "MESSAGE"}}
		for _, c := range r.Checks {
			rows = append(rows, []string{c.Status, c.ID, c.Message})
			if c.Remedy != "" {
				rows = append(rows, []string{"", "", "remedy: " + c.Remedy})
			}
		}
		h.statusTable(rows)
	}

	// `check` runs nothing: say what a run with a command would do.
	dec := r.Decision
	switch dec.Action {
	case decision.Abort:
		fmt.Fprintf(b, "\nVerdict: would abort with exit %d (policy %s)\n  %s\n", dec.ExitCode, or(dec.Policy, "-"), abortCause(r))
	case decision.Exec:
		fmt.Fprintf(b, "\nVerdict: would exec the command (policy %s): %s\n", or(dec.Policy, "-"), verdict(r))
	default:
		b.WriteString("\nVerdict: -\n")
	}
}

// pythonSummary is the interpreter the command runs and how it was
// told, or the environments judged when it could not be told.
func pythonSummary(p facts.Python) string {
	var s string
	switch {
	case p.Interpreter != "":
		s = p.Interpreter
		if p.Version != "" {
			s += " (" + p.Version + ")"
		}
	case len(p.Candidates) > 0:
		s = "one of " + strings.Join(p.Candidates, ", ") + ", each judged"
	}
	switch {
	case s == "":
		return or(p.How, "-")
	case p.How != "":
		s += ": " + p.How
	}
	return s
}

// cudaSummary is the CUDA check in one line, with the failed devices.
func cudaSummary(c facts.CUDACheck) string {
	if c.Mode == "" {
		return "-"
	}
	s := c.Mode + ": " + or(c.Outcome, "-")
	if c.DriverAPIVersion > 0 {
		s += ", driver API " + cuda.Version(c.DriverAPIVersion)
	}
	if c.Init != nil && c.Init.Error != "" {
		s += ", " + c.Init.Step + ": " + c.Init.Error
	}
	if len(c.Devices) > 0 {
		s += fmt.Sprintf(", %d device(s)", len(c.Devices))
	}
	for _, d := range c.Devices {
		if d.Result != "ok" {
			s += fmt.Sprintf("; device %d %s", d.Ordinal, d.Result)
		}
	}
	if c.Error != "" {
		s += ": " + c.Error
	}
	return s
}

// rdmaSummary is the RDMA active tier in one line.
func rdmaSummary(c facts.RDMACheck) string {
	s := or(c.Mode, "-")
	if c.Outcome != "" && c.Outcome != facts.RDMANotRun {
		s += fmt.Sprintf(": %s, %d device(s)", c.Outcome, len(c.Devices))
	}
	if c.List != nil && c.List.Failed() {
		s += "; " + c.List.Step + ": " + c.List.Errno
	}
	for _, d := range c.Devices {
		if f := d.Failed(); f != nil {
			s += "; " + d.Name + " " + f.Step + ": " + or(f.Errno, f.Message)
		}
	}
	return strings.TrimSuffix(s+": "+c.Error, ": ")
}

// ANSI colours for statuses.
const (
	red    = "\x1b[31m"
	yellow = "\x1b[33m"
	green  = "\x1b[32m"
	reset  = "\x1b[0m"
)

var statusColors = map[string]string{"error": red, "warn": yellow, "pass": green}

func sourceNote(src string) string {
	if src == "" || src == "none" {
		return ""
	}
	return " (from " + src + ")"
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func bytesOrUnknown(n uint64) string {
	if n == 0 {
		return "-"
	}
	return humanBytes(n)
}

func bytesOrUnlimited(n uint64) string {
	if n == 0 {
		return "unlimited"
	}
	return humanBytes(n)
}

// humanBytes prints a size in binary units with up to one decimal.
func humanBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatUint(n, 10) + " B"
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	s := strconv.FormatFloat(float64(n)/float64(div), 'f', 1, 64)
	return strings.TrimSuffix(s, ".0") + " " + "KMGTPE"[exp:exp+1] + "iB"
}
