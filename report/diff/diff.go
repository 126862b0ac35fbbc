// Package diff compares two provenance records and lists what changed, in
// the order a person chasing a regression looks for it: the driver first,
// then the GPUs, the image's CUDA, the image itself, its libraries and
// frameworks, the checks and the decision; then everything else.
//
// A change either matters (it can change how a training job behaves: a new
// driver, another GPU, another image, a check that now fails) or is minor
// (another host name, kernel, pod or rank: expected between any two runs).
// The run id, the start time and timings never count as changes; they
// differ between every two runs.
package diff

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/gpu-preflight/gpu-preflight/preflight/decision"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/report/redact"
	"github.com/gpu-preflight/gpu-preflight/report/termsafe"
)

// Change is one difference between two records. Old or New is "" when the
// value was absent or empty on that side (a GPU added, a check removed).
type Change struct {
	// Field names what changed, as a person reads it: "driver",
	// "driver CUDA", "GPU GPU-5c4b... name", "check driver-cuda".
	Field string `json:"field"`
	Old   string `json:"old"`
	New   string `json:"new"`
	// Matters is false for minor changes that are expected between runs.
	Matters bool `json:"matters"`
}

// AnyMatters reports whether any change matters.
func AnyMatters(changes []Change) bool {
	return slices.ContainsFunc(changes, func(c Change) bool { return c.Matters })
}

// differ collects changes in the order they are found.
type differ struct {
	changes []Change
}

func (d *differ) add(field, old, new string, matters bool) {
	if old != new {
		d.changes = append(d.changes, Change{Field: field, Old: old, New: new, Matters: matters})
	}
}

// Diff lists what changed from old to new: first every change that matters,
// most telling first, then the minor ones. Equal records give no changes.
func Diff(old, new report.Record) []Change {
	var d differ
	oh, nh := old.Host, new.Host
	d.add("driver", oh.Driver.Version, nh.Driver.Version, true)
	d.add("driver CUDA", oh.Driver.CUDAVersion, nh.Driver.CUDAVersion, true)
	d.add("driver kernel module", moduleKind(oh.Driver), moduleKind(nh.Driver), true)
	d.gpus(oh.GPUs, nh.GPUs)
	d.add("NVML library version", libraryField(oh.NVML, func(l facts.DriverLibrary) string { return l.Version }),
		libraryField(nh.NVML, func(l facts.DriverLibrary) string { return l.Version }), true)
	d.add("NVML library mounted", libraryField(oh.NVML, func(l facts.DriverLibrary) string { return ptrString(l.Mounted) }),
		libraryField(nh.NVML, func(l facts.DriverLibrary) string { return ptrString(l.Mounted) }), true)
	d.cuda(oh.CUDA, nh.CUDA)
	op, np := oh.Transport.Prediction, nh.Transport.Prediction
	d.add("NCCL network", op.Network, np.Network, true)
	d.add("NCCL devices", strings.Join(op.Devices, " "), strings.Join(np.Devices, " "), true)
	d.add("NCCL link layer", op.LinkLayer, np.LinkLayer, true)
	d.add("GPUDirect RDMA", op.GDR, np.GDR, true)

	oi, ni := old.Image, new.Image
	d.add("image CUDA", imageCUDA(oi), imageCUDA(ni), true)
	d.requirements(oi.Requirements, ni.Requirements)
	d.add("image requirements disabled", yesNo(oi.RequireDisabled), yesNo(ni.RequireDisabled), true)
	d.add("image digest", oi.Digest, ni.Digest, true)
	d.add("image ref", oi.Ref, ni.Ref, true)
	d.add("image revision", oi.Revision, ni.Revision, true)
	d.add("cuDNN", oi.CuDNNVersion, ni.CuDNNVersion, true)
	d.add("NCCL", oi.NCCLVersion, ni.NCCLVersion, true)
	d.add("TensorRT", oi.TensorRTVersion, ni.TensorRTVersion, true)
	d.add("CUDA forward compatibility", compat(oi.Compat), compat(ni.Compat), true)
	d.frameworks(oi.Frameworks, ni.Frameworks)
	d.add("ranks per node", ranks(oi.Ranks), ranks(ni.Ranks), true)
	d.env(old.Env, new.Env, true)
	d.checks(old.Checks, new.Checks)
	d.add("decision", decisionText(old.Decision), decisionText(new.Decision), true)
	d.add("policy", old.Decision.Policy, new.Decision.Policy, true)

	// Minor: everything not compared above, field by field, so that no
	// difference goes unreported.
	d.rest(old, new)
	d.checkTexts(old.Checks, new.Checks)
	d.env(old.Env, new.Env, false)
	return d.changes
}

func moduleKind(d facts.Driver) string {
	switch {
	case d.Version == "":
		return ""
	case d.OpenKernelModule:
		return "open"
	}
	return "proprietary"
}

// imageCUDA is the toolkit's full version when the image says it, since
// 12.4.0 and 12.4.1 are different runtimes; else major.minor.
func imageCUDA(i report.Image) string {
	if i.CUDAVersionFull != "" {
		return i.CUDAVersionFull
	}
	return i.CUDAVersion
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func compat(libs []facts.CompatLib) string {
	vs := make([]string, 0, len(libs))
	for _, l := range libs {
		v := l.DriverVersion
		if v == "" {
			v = l.Path
		}
		vs = append(vs, v)
	}
	slices.Sort(vs)
	return strings.Join(vs, ", ")
}

func decisionText(d decision.Decision) string {
	if d.Action == decision.Abort {
		return fmt.Sprintf("abort (exit %d)", d.ExitCode)
	}
	return d.Action
}

// gpuKey identifies a GPU across runs: its UUID, which NVML reports and
// which survives reboots and re-enumeration; without one, its PCI bus id;
// without that, its index.
func gpuKey(g facts.GPU) string {
	switch {
	case g.UUID != "":
		return g.UUID
	case g.PCIBusID != "":
		return g.PCIBusID
	}
	return "#" + strconv.Itoa(g.Index)
}

// keys returns key(x) for each element, made unique: a key seen before
// gets " #2", " #3"... in order, so that two entries with the same key (two
// GPUs without a UUID at one bus id, say) are still compared one to one.
func keys[T any](xs []T, key func(T) string) []string {
	ks := make([]string, len(xs))
	seen := map[string]int{}
	for i, x := range xs {
		k := key(x)
		seen[k]++
		if n := seen[k]; n > 1 {
			k += " #" + strconv.Itoa(n)
		}
		ks[i] = k
	}
	return ks
}

// index maps each key to its element.
func index[T any](xs []T, ks []string) map[string]T {
	m := make(map[string]T, len(xs))
	for i, x := range xs {
		m[ks[i]] = x
	}
	return m
}

func gpuSummary(g facts.GPU) string {
	s := g.Name
	if s == "" {
		s = "unknown GPU"
	}
	if g.ComputeCapability != "" {
		s += ", compute " + g.ComputeCapability
	}
	return s
}

// gpuSet is "8 x NVIDIA H100 80GB HBM3" or a list of the distinct models.
func gpuSet(gs []facts.GPU) string {
	if len(gs) == 0 {
		return "none"
	}
	var names []string
	count := map[string]int{}
	for _, g := range gs {
		n := g.Name
		if n == "" {
			n = "unknown GPU"
		}
		if count[n] == 0 {
			names = append(names, n)
		}
		count[n]++
	}
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%d x %s", count[n], n)
	}
	return strings.Join(parts, ", ")
}

// gpus compares the GPU sets by key: a one-line summary when the set
// changed, each GPU removed and added, then each field of the GPUs in both.
func (d *differ) gpus(old, new []facts.GPU) {
	oldKeys, newKeys := keys(old, gpuKey), keys(new, gpuKey)
	oldBy := index(old, oldKeys)
	newBy := index(new, newKeys)
	var removed, added []int
	for i, k := range oldKeys {
		if _, ok := newBy[k]; !ok {
			removed = append(removed, i)
		}
	}
	for i, k := range newKeys {
		if _, ok := oldBy[k]; !ok {
			added = append(added, i)
		}
	}
	if len(removed)+len(added) > 0 {
		d.changes = append(d.changes, Change{Field: "GPUs", Old: gpuSet(old), New: gpuSet(new), Matters: true})
	}
	for _, i := range removed {
		d.add("GPU "+oldKeys[i], gpuSummary(old[i]), "", true)
	}
	for _, i := range added {
		d.add("GPU "+newKeys[i], "", gpuSummary(new[i]), true)
	}
	// Fields of GPUs present in both runs. Name, compute capability, brand,
	// MIG and persistence mode change what a job can run or how it starts;
	// the rest are minor (an index or bus id moves when GPUs are
	// re-enumerated; ECC counts and retired pages are judged by the checks).
	type field struct {
		name    string
		get     func(facts.GPU) string
		matters bool
	}
	fields := []field{
		{"name", func(g facts.GPU) string { return g.Name }, true},
		{"compute capability", func(g facts.GPU) string { return g.ComputeCapability }, true},
		{"brand", func(g facts.GPU) string { return g.Brand }, true},
		{"MIG mode", func(g facts.GPU) string { return g.MIGMode }, true},
		{"persistence mode", func(g facts.GPU) string { return g.PersistenceMode }, true},
		{"row remap pending", health(func(h facts.GPUHealth) any {
			return through(h.RemappedRows, func(r facts.RemappedRows) bool { return r.Pending })
		}), true},
		{"row remap failed", health(func(h facts.GPUHealth) any {
			return through(h.RemappedRows, func(r facts.RemappedRows) bool { return r.Failed })
		}), true},
		{"fabric state", health(func(h facts.GPUHealth) any { return through(h.Fabric, func(f facts.Fabric) string { return f.State }) }), true},
		{"active NVLinks", health(func(h facts.GPUHealth) any { return through(h.NVLink, func(n facts.NVLink) int { return n.Active }) }), true},
		{"PCIe max generation", health(func(h facts.GPUHealth) any { return through(h.PCIe, func(p facts.PCIe) int { return p.MaxGeneration }) }), true},
		{"PCIe max width", health(func(h facts.GPUHealth) any { return through(h.PCIe, func(p facts.PCIe) int { return p.MaxWidth }) }), true},
		{"clock events", health(func(h facts.GPUHealth) any { return strings.Join(h.ClockEvents, " ") }), true},
		{"compute mode", health(func(h facts.GPUHealth) any { return h.ComputeMode }), true},
		{"compute processes", health(func(h facts.GPUHealth) any {
			return through(h.Processes, func(p facts.Processes) int { return p.Count })
		}), false},
		{"index", func(g facts.GPU) string { return strconv.Itoa(g.Index) }, false},
		{"PCI bus id", func(g facts.GPU) string { return g.PCIBusID }, false},
		{"architecture", func(g facts.GPU) string { return g.Architecture }, false},
		{"memory bytes", func(g facts.GPU) string { return uintString(g.MemoryBytes) }, false},
		{"uncorrected ECC errors", func(g facts.GPU) string { return ptrString(g.ECCUncorrectedVolatile) }, false},
		{"retired pages pending", func(g facts.GPU) string { return ptrString(g.RetiredPagesPending) }, false},
		{"MIG devices", func(g facts.GPU) string { return ptrString(g.MIGDevices) }, false},
	}
	for _, matters := range []bool{true, false} {
		for i, ng := range new {
			key := newKeys[i]
			og, ok := oldBy[key]
			if !ok {
				continue
			}
			for _, f := range fields {
				if f.matters == matters {
					d.add("GPU "+key+" "+f.name, f.get(og), f.get(ng), matters)
				}
			}
		}
	}
}

// health reads a GPU's health fact, "" when NVML gave none.
func health(get func(facts.GPUHealth) any) func(facts.GPU) string {
	return func(g facts.GPU) string {
		if g.Health == nil {
			return ""
		}
		if v := get(*g.Health); v != nil {
			return fmt.Sprint(v)
		}
		return ""
	}
}

// through is get(*p), nil when p is.
func through[T, V any](p *T, get func(T) V) any {
	if p == nil {
		return nil
	}
	return get(*p)
}

func libraryField(n facts.NVML, get func(facts.DriverLibrary) string) string {
	if n.Library == nil {
		return ""
	}
	return get(*n.Library)
}

// ranks is each launcher's count of processes on the node.
func ranks(rs []facts.Ranks) string {
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%s %d (%s)", r.Launcher, r.PerNode, r.Source))
	}
	return strings.Join(out, ", ")
}

func uintString(n uint64) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatUint(n, 10)
}

func ptrString[T any](p *T) string {
	if p == nil {
		return ""
	}
	return fmt.Sprint(*p)
}

// byKey compares two lists entry by entry under key: value(x) for each
// entry of new against the old entry of the same key ("" when old had
// none), in new's order, then each entry only old has against "". Every
// change matters.
func byKey[T any](d *differ, field string, old, new []T, key, value func(T) string) {
	oldKeys, newKeys := keys(old, key), keys(new, key)
	oldBy, newBy := index(old, oldKeys), index(new, newKeys)
	for i, x := range new {
		was := ""
		if o, ok := oldBy[newKeys[i]]; ok {
			was = value(o)
		}
		d.add(field+newKeys[i], was, value(x), true)
	}
	for i, x := range old {
		if _, ok := newBy[oldKeys[i]]; !ok {
			d.add(field+oldKeys[i], value(x), "", true)
		}
	}
}

func (d *differ) requirements(old, new []facts.Requirement) {
	byKey(d, "image ", old, new, func(r facts.Requirement) string { return r.Var }, func(r facts.Requirement) string { return r.Value })
}

func frameworkSummary(f facts.Framework) string {
	s := f.Version
	if s == "" {
		s = "unknown version"
	}
	if f.CUDAVersion != "" {
		s += ", CUDA " + f.CUDAVersion
	} else {
		s += ", no CUDA"
	}
	return s
}

func (d *differ) frameworks(old, new []facts.Framework) {
	byName := func(f facts.Framework) string { return f.Name }
	oldKeys, newKeys := keys(old, byName), keys(new, byName)
	oldBy, newBy := index(old, oldKeys), index(new, newKeys)
	for i, f := range old {
		if _, ok := newBy[oldKeys[i]]; !ok {
			d.add(oldKeys[i], frameworkSummary(f), "", true)
		}
	}
	for i, nf := range new {
		name := newKeys[i]
		of, ok := oldBy[name]
		if !ok {
			d.add(name, "", frameworkSummary(nf), true)
			continue
		}
		d.add(name, of.Version, nf.Version, true)
		d.add(name+" CUDA", of.CUDAVersion, nf.CUDAVersion, true)
		d.add(name+" cuDNN", of.CuDNNVersion, nf.CuDNNVersion, true)
		d.add(name+" GPU targets", archs(of.Archs), archs(nf.Archs), true)
	}
}

// archs is the framework's targets as a sorted set: the scan's order is no change.
func archs(a []string) string {
	s := slices.Clone(a)
	slices.Sort(s)
	return strings.Join(slices.Compact(s), " ")
}

// tuningPrefixes are the recorded variables that change how CUDA, cuDNN,
// NCCL and the frameworks behave, so a change in one matters: NCCL_P2P_DISABLE,
// CUDA_MODULE_LOADING, PYTORCH_CUDA_ALLOC_CONF, FLAGS_cudnn_deterministic,
// XLA_FLAGS. Launcher and placement variables (ranks, pod, Slurm ids,
// HOSTNAME) and visibility (NVIDIA_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES;
// the GPU set says what they select) differ between any two runs: minor.
var tuningPrefixes = append([]string{"CUDA_", "CUDNN_", "CUBLAS_", "NCCL_", "TORCH_", "PYTORCH_", "FLAGS_", "XLA_"},
	redact.TensorFlowPrefixes...)

var tuningNames = map[string]bool{"LD_LIBRARY_PATH": true, "LD_PRELOAD": true}

// Tuning reports whether a recorded variable changes how CUDA, cuDNN, NCCL
// or a framework behaves, so that a change in it matters.
func Tuning(name string) bool { return tuning(name) }

func tuning(name string) bool {
	if name == "CUDA_VISIBLE_DEVICES" {
		return false
	}
	if tuningNames[name] {
		return true
	}
	for _, p := range tuningPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// env lists changed variables, sorted by name: the tuning ones when
// matters is true, the rest otherwise.
func (d *differ) env(old, new map[string]string, matters bool) {
	names := make([]string, 0, len(old)+len(new))
	for n := range old {
		names = append(names, n)
	}
	for n := range new {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range slices.Compact(names) {
		if tuning(n) == matters {
			d.add("env "+n, old[n], new[n], matters)
		}
	}
}

// checks lists each check whose status changed, in the new record's order,
// then the checks the new record no longer has. Messages are minor: they
// restate the facts compared above.
func (d *differ) checks(old, new []report.Check) {
	byKey(d, "check ", old, new, checkID, func(c report.Check) string { return c.Status })
}

func checkID(c report.Check) string { return c.ID }

// checkTexts lists changed messages and remedies, as minor changes.
func (d *differ) checkTexts(old, new []report.Check) {
	oldBy, newKeys := index(old, keys(old, checkID)), keys(new, checkID)
	for i, c := range new {
		id := newKeys[i]
		if o, ok := oldBy[id]; ok {
			d.add("check "+id+" message", o.Message, c.Message, false)
			d.add("check "+id+" remedy", o.Remedy, c.Remedy, false)
		}
	}
}

// covered are the JSON paths compared above (or never), with all below them.
var covered = []string{
	"runId", "startedAt",
	"host.driver.version", "host.driver.cudaVersion", "host.driver.openKernelModule", "host.gpus",
	"host.nvml.durationMillis", "host.nvml.library.version", "host.nvml.library.mounted", "host.cuda",
	"host.transport.prediction.network", "host.transport.prediction.devices", "host.transport.prediction.linkLayer",
	"host.transport.prediction.gdr", "image.ranks",
	// Derived from the driver version and the digest, which are compared.
	"host.driver.branch", "image.pinned",
	"image.cudaVersion", "image.cudaVersionFull", "image.requirements", "image.requireDisabled",
	"image.digest", "image.ref", "image.revision",
	"image.cudnnVersion", "image.ncclVersion", "image.tensorrtVersion", "image.compat", "image.frameworks",
	"env", "checks", "decision",
	"outcome.finishedAt", "outcome.durationSeconds",
}

// labels name the minor fields a person knows by a shorter name.
var labels = map[string]string{
	"host.hostname":         "hostname",
	"host.kernel":           "kernel",
	"outcome.exitCode":      "command exit code",
	"outcome.signal":        "command signal",
	"command.argv":          "command",
	"command.argvSha256":    "command digest",
	"tool.version":          "gpu-preflight version",
	"tool.commit":           "gpu-preflight commit",
	"host.driver.source":    "driver source",
	"orchestrator.jobId":    "job id",
	"host.nvml.outcome":     "NVML probe",
	"image.created":         "image created",
	"host.shmBytes":         "/dev/shm bytes",
	"host.deviceNodes":      "device nodes",
	"orchestrator.detected": "launchers",
}

// minorFirst are the minor fields listed first, in order; the rest by path.
var minorFirst = []string{"host.hostname", "host.kernel", "outcome.exitCode", "outcome.signal", "command.argv", "command.argvSha256"}

// rest compares every field not covered above, as minor changes, from both
// records' JSON: a field added to the record later needs no change here.
func (d *differ) rest(old, new report.Record) {
	r := restPool.Get().(*restBufs)
	defer r.put()
	r.keys = r.keys[:0]
	r.json[0], r.json[1] = appendJSON(old, r.json[0][:0]), appendJSON(new, r.json[1][:0])
	for i := range r.m {
		clear(r.m[i])
		flatten(unsafe.String(unsafe.SliceData(r.json[i]), len(r.json[i])), r.m[i], &r.keys)
	}
	ov, nv := r.m[0], r.m[1]
	paths := r.paths[:0]
	for p := range ov {
		paths = append(paths, p)
	}
	for p := range nv {
		paths = append(paths, p)
	}
	r.paths = paths
	slices.SortFunc(paths, func(a, b string) int {
		ia, ib := rank(a), rank(b)
		if ia != ib {
			return ia - ib
		}
		return strings.Compare(a, b)
	})
	for _, p := range slices.Compact(paths) {
		o, n := ov[p], nv[p]
		if o == n {
			continue
		}
		label := labels[p]
		if label == "" {
			label = strings.Clone(p)
		}
		d.add(label, strings.Clone(o), strings.Clone(n), false)
	}
}

// rank orders minorFirst before every other path.
func rank(path string) int {
	if i := slices.Index(minorFirst, path); i >= 0 {
		return i
	}
	return len(minorFirst)
}

func isCovered(path string) bool {
	for _, c := range covered {
		if strings.HasPrefix(path, c) && (len(path) == len(c) || path[len(c)] == '.') {
			return true
		}
	}
	return false
}

// restBufs is rest's room, reused call to call: what rest keeps is cloned.
type restBufs struct {
	json  [2][]byte
	m     [2]map[string]string
	keys  []byte
	paths []string
}

var restPool = sync.Pool{New: func() any { return &restBufs{m: [2]map[string]string{{}, {}}} }}

func (r *restBufs) put() {
	if cap(r.json[0])+cap(r.json[1])+cap(r.keys) <= 256<<10 { // a hostile record's is let go
		restPool.Put(r)
	}
}

func appendJSON(r report.Record, dst []byte) []byte {
	b, err := r.AppendJSON(dst)
	if err != nil {
		// A Record holds only strings, numbers, bools, slices and maps.
		panic(fmt.Sprintf("diff: a report.Record did not encode: %v", err))
	}
	return b
}

// flatten fills m from a record's JSON, as encoding/json reads it, with
// dotted paths not covered to scalars: an array of scalars is one
// space-separated value, an array of objects indexed; null, "" and absent
// give no entry. The paths are built in keys.
func flatten(js string, m map[string]string, keys *[]byte) {
	f := flattener{js: js, m: m, keys: keys}
	f.put("")
}

// flattener walks JSON that AppendJSON wrote, so valid JSON.
type flattener struct {
	js   string
	i    int
	m    map[string]string
	keys *[]byte // holds the paths
}

func (f *flattener) put(path string) {
	f.space()
	if path != "" && isCovered(path) {
		f.skip()
		return
	}
	switch f.js[f.i] {
	case '{':
		f.i++
		for f.next('}') {
			k := f.scalar()
			f.space()
			f.i++ // the colon
			f.put(f.join(path, k))
		}
	case '[':
		f.i++
		var scalars []string
		for n := 0; f.next(']'); n++ {
			if c := f.js[f.i]; c == '{' || c == '[' {
				f.put(f.join(path, strconv.Itoa(n)))
			} else {
				scalars = append(scalars, f.scalar())
			}
		}
		if len(scalars) > 0 {
			f.m[path] = strings.Join(scalars, " ")
		}
	default:
		if s := f.scalar(); s != "" {
			f.m[path] = s
		}
	}
}

// next says whether an element follows before end, stepping over end if not.
func (f *flattener) next(end byte) bool {
	f.space()
	if f.js[f.i] == ',' {
		f.i++
		f.space()
	}
	if f.js[f.i] == end {
		f.i++
		return false
	}
	return true
}

func (f *flattener) space() {
	for f.i < len(f.js) && strings.IndexByte(" \t\r\n", f.js[f.i]) >= 0 {
		f.i++
	}
}

// scalar reads a string, number, bool or null as its text; null is "".
func (f *flattener) scalar() string {
	start := f.i
	switch f.js[f.i] {
	case '"':
		escaped := false
		for f.i++; f.js[f.i] != '"'; f.i++ {
			if f.js[f.i] == '\\' {
				escaped = true
				f.i++
			}
		}
		f.i++
		if s := f.js[start+1 : f.i-1]; !escaped && utf8.ValidString(s) {
			return s
		}
		var s string
		_ = json.Unmarshal([]byte(f.js[start:f.i]), &s) // escapes and bytes not UTF-8
		return s
	case 'n':
		f.i += len("null")
		return ""
	}
	for f.i < len(f.js) && strings.IndexByte(",]} \t\r\n", f.js[f.i]) < 0 {
		f.i++
	}
	return f.js[start:f.i]
}

func (f *flattener) skip() {
	depth := 0
	for {
		switch f.js[f.i] {
		case '{', '[':
			depth++
			f.i++
		case '}', ']':
			depth--
			f.i++
		case '"':
			f.scalar()
		default:
			f.i++
		}
		if depth == 0 {
			f.space()
			if f.i == len(f.js) || strings.IndexByte(",]}", f.js[f.i]) >= 0 {
				return
			}
		}
	}
}

func (f *flattener) join(path, k string) string {
	if path == "" {
		return k
	}
	i := len(*f.keys)
	*f.keys = append(append(append(*f.keys, path...), '.'), k...)
	return unsafe.String(&(*f.keys)[i], len(*f.keys)-i)
}

// Render writes changes escaped for a terminal, those that matter first:
//
//	driver: 535.129.03 -> 550.54.15
//	driver CUDA: 12.2 -> 12.4
//	GPU GPU-2f3a...: (none) -> NVIDIA H100 80GB HBM3, compute 9.0
//	minor:
//	  hostname: node-a -> node-b
func Render(w io.Writer, changes []Change) error {
	var b strings.Builder
	if len(changes) == 0 {
		b.WriteString("no changes\n")
	} else if !AnyMatters(changes) {
		b.WriteString("nothing that matters changed\n")
	}
	minor := false
	for _, c := range changes {
		indent := ""
		if !c.Matters {
			if !minor {
				b.WriteString("minor:\n")
				minor = true
			}
			indent = "  "
		}
		fmt.Fprintf(&b, "%s%s: %s -> %s\n", indent, termsafe.String(c.Field), shown(c.Old), shown(c.New))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func shown(s string) string {
	if s == "" {
		return "(none)"
	}
	return termsafe.String(s)
}
