package provline

import (
	"crypto/sha256"
	"slices"
	"strconv"
	"strings"
)

// finish brings every list within its budget, half of it when tight, and
// sorts Env.
func (r *Run) finish(ls *[nLists]list, tight bool) {
	budget := func(l int) int {
		if tight {
			return budgets[l] / 2
		}
		return budgets[l]
	}
	sortVars(r.Env)
	var scratch []byte
	r.Host.GPUs = fit(r.Host.GPUs, &ls[lGPUs], budget(lGPUs), &scratch, appendGPU, func(m string, n int) GPU { return GPU{Name: m, Count: n} })
	r.Image.Requirements = fit(r.Image.Requirements, &ls[lRequirements], budget(lRequirements), &scratch, appendRequirement, func(m string, _ int) Var { return Var{Name: m} })
	r.Image.Compat = fit(r.Image.Compat, &ls[lCompat], budget(lCompat), &scratch, appendString, markerString)
	r.Image.Frameworks = fit(r.Image.Frameworks, &ls[lFrameworks], budget(lFrameworks), &scratch, appendFramework, func(m string, _ int) Framework { return Framework{Name: m} })
	r.Checks = fit(r.Checks, &ls[lChecks], budget(lChecks), &scratch, appendCheck, func(m string, _ int) Check { return Check{ID: m} })
	r.Decision.Blocking = fit(r.Decision.Blocking, &ls[lBlocking], budget(lBlocking), &scratch, appendString, markerString)
	r.Env = fit(r.Env, &ls[lEnv], budget(lEnv), &scratch, appendEnvVar, func(m string, _ int) Var { return Var{Name: m} })
}

// Set makes r a copy of src that shares no list with it, in r's own room.
func (r *Run) Set(src *Run) {
	gpus, req, compat, fws := r.Host.GPUs[:0], r.Image.Requirements[:0], r.Image.Compat[:0], r.Image.Frameworks[:0]
	checks, blocking, env, out := r.Checks[:0], r.Decision.Blocking[:0], r.Env[:0], r.Outcome
	*r = *src
	r.Host.GPUs = append(gpus, src.Host.GPUs...)
	r.Image.Requirements = append(req, src.Image.Requirements...)
	r.Image.Compat = append(compat, src.Image.Compat...)
	for _, f := range src.Image.Frameworks {
		var archs []string // r's own, from the framework this one replaces
		if len(fws) < cap(fws) {
			archs = fws[:len(fws)+1][len(fws)].Archs[:0]
		}
		if f.Archs != nil {
			f.Archs = append(archs, f.Archs...)
			if f.Archs == nil {
				f.Archs = []string{}
			}
		}
		fws = append(fws, f)
	}
	r.Image.Frameworks = fws
	r.Checks = append(checks, src.Checks...)
	r.Decision.Blocking = append(blocking, src.Decision.Blocking...)
	r.Env = append(env, src.Env...)
	if src.Outcome != nil {
		if out == nil {
			out = new(Outcome)
		}
		*out = *src.Outcome
		r.Outcome = out
	}
}

// clone copies r's lists, which finish rewrites.
func (r Run) clone() Run {
	r.Host.GPUs = slices.Clone(r.Host.GPUs)
	r.Image.Requirements = slices.Clone(r.Image.Requirements)
	r.Image.Compat = slices.Clone(r.Image.Compat)
	r.Image.Frameworks = slices.Clone(r.Image.Frameworks)
	r.Checks = slices.Clone(r.Checks)
	r.Decision.Blocking = slices.Clone(r.Decision.Blocking)
	r.Env = slices.Clone(r.Env)
	if r.Outcome != nil {
		o := *r.Outcome
		r.Outcome = &o
	}
	return r
}

// tighten cuts every value but those that name the run and its image to
// capTight.
func (r *Run) tighten() {
	for _, p := range []*string{&r.Tool, &r.Host.Hostname, &r.Host.Driver.Version, &r.Host.Driver.CUDAVersion,
		&r.Host.Driver.Branch, &r.Host.Transport.Network, &r.Host.Transport.LinkLayer, &r.Host.Transport.Devices, &r.Host.CUDA.Mode, &r.Host.CUDA.Outcome, &r.Image.CUDAVersion, &r.Image.CUDAVersionFull,
		&r.Image.CuDNNVersion, &r.Image.NCCLVersion, &r.Image.TensorRTVersion, &r.Image.Ref, &r.Image.Revision,
		&r.Decision.Policy, &r.Decision.Action, &r.Command.Program, &r.Command.ArgvRecord,
		&r.Orchestrator.JobID, &r.Orchestrator.JobIDSource, &r.Orchestrator.Namespace, &r.Orchestrator.PodName,
		&r.Orchestrator.NodeName, &r.Orchestrator.CompletionIdx, &r.Orchestrator.SlurmNodeName, &r.Orchestrator.SlurmProcID,
		&r.Orchestrator.TorchrunRank, &r.Orchestrator.PaddleTrainerID, &r.Orchestrator.KubeflowJobID} {
		*p = Cap([]byte(*p), false, [32]byte{}, capTight)
	}
}

// maxOutcomeBytes is the most an outcome adds to the encoding. Which caps
// a record is reduced under is decided without it, so a run's record
// reduces alike before and after its command ended.
var maxOutcomeBytes = len(`,"outcome":{"exitCode":-2147483648,"signal":-2147483648,"notStarted":""}`) + capText

// size is r's encoded length without its outcome.
func (r Run) size(buf *[]byte) int {
	r.Outcome = nil
	*buf = r.AppendJSON((*buf)[:0])
	return len(*buf)
}

func markerString(m string, _ int) string { return m }

// isMarker reports whether s is a marker a list ended with.
func isMarker(s string) bool {
	return strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") && strings.Contains(s, " more, ")
}

// fit keeps xs within budget encoded bytes: when they do not fit (or some
// were folded already), elements are dropped from the end, folded into
// l, until a marker of them all fits after the rest.
func fit[T any](xs []T, l *list, budget int, scratch *[]byte, enc func([]byte, T) []byte, mark func(string, int) T) []T {
	size := func(xs []T) int { return listSize(scratch, xs, enc) }
	if l.over == 0 && size(xs) <= budget {
		return xs
	}
	for {
		if l.over > 0 {
			m := mark(marker(l.over, l.sum), l.weight)
			if size(append(slices.Clip(xs), m)) <= budget || len(xs) == 0 {
				return append(xs, m)
			}
		}
		last := xs[len(xs)-1]
		xs = xs[:len(xs)-1]
		l.fold(enc(nil, last), weightOf(last))
	}
}

// weightOf is how many things an element stands for: a GPU run its
// count, anything else one.
func weightOf(x any) int {
	if g, ok := x.(GPU); ok {
		return g.Count
	}
	return 1
}

// list is what a list had no room for: how many elements, how many things
// they stood for, and a digest of their encodings.
type list struct {
	over, weight int
	sum          []byte
}

func (l *list) fold(enc []byte, weight int) {
	h := sha256.New()
	h.Write(l.sum)
	h.Write(enc)
	l.sum = h.Sum(nil)
	l.over++
	l.weight += weight
}

// sortVars sorts by name, markers last.
func sortVars(vs []Var) {
	slices.SortStableFunc(vs, func(a, b Var) int {
		if ma, mb := isMarker(a.Name), isMarker(b.Name); ma != mb {
			if ma {
				return 1
			}
			return -1
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// AppendJSON appends r in the record's shape, empty values left out.
func (r *Run) AppendJSON(b []byte) []byte {
	var o obj
	b = o.open(b)
	b = o.str(b, "schemaVersion", r.SchemaVersion, true)
	b = o.str(b, "runId", r.RunID, true)
	b = o.str(b, "startedAt", r.StartedAt, true)
	if r.Tool != "" {
		var t obj
		b = t.open(o.key(b, "tool"))
		b = t.close(t.str(b, "version", r.Tool, false))
	}
	b = r.appendHost(o.key(b, "host"))
	b = r.appendImage(o.key(b, "image"))
	if len(r.Checks) > 0 {
		b = appendList(o.key(b, "checks"), r.Checks, appendCheck)
	}
	var d obj
	b = d.open(o.key(b, "decision"))
	b = d.str(b, "policy", r.Decision.Policy, false)
	b = d.str(b, "action", r.Decision.Action, false)
	b = d.num(b, "exitCode", r.Decision.ExitCode)
	b = d.flag(b, "nodeFault", r.Decision.NodeFault)
	if len(r.Decision.Blocking) > 0 {
		b = appendList(d.key(b, "blocking"), r.Decision.Blocking, appendString)
	}
	b = d.close(b)
	var c obj
	b = c.open(o.key(b, "command"))
	if r.Command.Program != "" {
		b = appendList(c.key(b, "argv"), []string{r.Command.Program}, appendString)
	}
	b = c.str(b, "argvSha256", r.Command.ArgvSHA256, false)
	b = c.str(b, "argvRecord", r.Command.ArgvRecord, false)
	b = c.num(b, "argvDropped", r.Command.ArgvDropped)
	b = c.close(c.flag(b, "supervised", r.Command.Supervised))
	b = r.appendOrchestrator(o.key(b, "orchestrator"))
	if len(r.Env) > 0 {
		var e obj
		b = e.open(o.key(b, "env"))
		for _, v := range r.Env {
			b = e.str(b, v.Name, v.Value, true)
		}
		b = e.close(b)
	}
	if out := r.Outcome; out != nil {
		var x obj
		b = x.open(o.key(b, "outcome"))
		b = strconv.AppendInt(x.key(b, "exitCode"), int64(out.ExitCode), 10)
		b = strconv.AppendInt(x.key(b, "signal"), int64(out.Signal), 10)
		b = x.close(x.str(b, "notStarted", out.NotStarted, false))
	}
	return o.close(b)
}

func (r *Run) appendHost(b []byte) []byte {
	h := r.Host
	var o obj
	b = o.open(b)
	b = o.str(b, "hostname", h.Hostname, false)
	var d obj
	b = d.open(o.key(b, "driver"))
	b = d.str(b, "version", h.Driver.Version, false)
	b = d.str(b, "cudaVersion", h.Driver.CUDAVersion, false)
	b = d.flag(b, "openKernelModule", h.Driver.OpenKernelModule)
	if h.Driver.Branch != "" {
		var br obj
		b = br.open(d.key(b, "branch"))
		b = br.close(br.str(b, "name", h.Driver.Branch, false))
	}
	b = d.close(b)
	if len(h.GPUs) > 0 {
		b = appendList(o.key(b, "gpus"), h.GPUs, appendGPU)
	}
	if t := h.Transport; t != (Transport{}) {
		var tr, p obj
		b = tr.open(o.key(b, "transport"))
		b = p.open(tr.key(b, "prediction"))
		b = p.str(b, "network", t.Network, false)
		b = p.str(b, "linkLayer", t.LinkLayer, false)
		if t.Devices != "" {
			b = appendList(p.key(b, "devices"), []string{t.Devices}, appendString)
		}
		b = tr.close(p.close(b))
	}
	if h.CUDA != (CUDA{}) {
		var c obj
		b = c.open(o.key(b, "cuda"))
		b = c.str(b, "mode", h.CUDA.Mode, false)
		b = c.str(b, "outcome", h.CUDA.Outcome, false)
		b = c.close(c.num(b, "driverApiVersion", h.CUDA.DriverAPIVersion))
	}
	return o.close(b)
}

func (r *Run) appendImage(b []byte) []byte {
	im := r.Image
	var o obj
	b = o.open(b)
	b = o.str(b, "cudaVersion", im.CUDAVersion, false)
	b = o.str(b, "cudaVersionFull", im.CUDAVersionFull, false)
	if len(im.Requirements) > 0 {
		b = appendList(o.key(b, "requirements"), im.Requirements, appendRequirement)
	}
	b = o.flag(b, "requireDisabled", im.RequireDisabled)
	b = o.str(b, "cudnnVersion", im.CuDNNVersion, false)
	b = o.str(b, "ncclVersion", im.NCCLVersion, false)
	b = o.str(b, "tensorrtVersion", im.TensorRTVersion, false)
	if len(im.Compat) > 0 {
		b = appendList(o.key(b, "compat"), im.Compat, func(b []byte, v string) []byte {
			var c obj
			return c.close(c.str(c.open(b), "driverVersion", v, true))
		})
	}
	if len(im.Frameworks) > 0 {
		b = appendList(o.key(b, "frameworks"), im.Frameworks, appendFramework)
	}
	b = o.str(b, "ref", im.Ref, false)
	b = o.str(b, "digest", im.Digest, false)
	b = o.str(b, "revision", im.Revision, false)
	return o.close(b)
}

func (r *Run) appendOrchestrator(b []byte) []byte {
	x := r.Orchestrator
	var o obj
	b = o.open(b)
	b = o.str(b, "jobId", x.JobID, false)
	b = o.str(b, "jobIdSource", x.JobIDSource, false)
	if x.Namespace != "" || x.PodName != "" || x.NodeName != "" || x.CompletionIdx != "" {
		var k obj
		b = k.open(o.key(b, "kubernetes"))
		b = k.str(b, "namespace", x.Namespace, false)
		b = k.str(b, "podName", x.PodName, false)
		b = k.str(b, "nodeName", x.NodeName, false)
		b = k.close(k.str(b, "completionIndex", x.CompletionIdx, false))
	}
	if x.SlurmNodeName != "" || x.SlurmProcID != "" {
		var s obj
		b = s.open(o.key(b, "slurm"))
		b = s.str(b, "nodeName", x.SlurmNodeName, false)
		b = s.close(s.str(b, "procId", x.SlurmProcID, false))
	}
	for _, m := range []struct{ obj, key, v string }{
		{"torchrun", "rank", x.TorchrunRank}, {"paddle", "trainerId", x.PaddleTrainerID}, {"kubeflow", "jobName", x.KubeflowJobID},
	} {
		if m.v != "" {
			var s obj
			b = s.open(o.key(b, m.obj))
			b = s.close(s.str(b, m.key, m.v, true))
		}
	}
	return o.close(b)
}

func appendGPU(b []byte, g GPU) []byte {
	var o obj
	b = o.open(b)
	b = o.str(b, "name", g.Name, false)
	b = o.str(b, "brand", g.Brand, false)
	b = o.str(b, "computeCapability", g.ComputeCapability, false)
	b = o.str(b, "migMode", g.MIGMode, false)
	b = o.str(b, "persistenceMode", g.PersistenceMode, false)
	if g.Count > 1 {
		b = o.num(b, "count", g.Count)
	}
	return o.close(b)
}

func appendRequirement(b []byte, v Var) []byte {
	var o obj
	b = o.open(b)
	b = o.str(b, "var", v.Name, false)
	return o.close(o.str(b, "value", v.Value, false))
}

func appendFramework(b []byte, f Framework) []byte {
	var o obj
	b = o.open(b)
	b = o.str(b, "name", f.Name, true)
	b = o.str(b, "version", f.Version, false)
	b = o.str(b, "cudaVersion", f.CUDAVersion, false)
	b = o.str(b, "cudnnVersion", f.CuDNNVersion, false)
	b = o.str(b, "build", f.Build, false)
	if len(f.Archs) > 0 {
		b = appendList(o.key(b, "archs"), f.Archs, appendString)
	}
	return o.close(b)
}

func appendCheck(b []byte, c Check) []byte {
	var o obj
	b = o.open(b)
	b = o.str(b, "id", c.ID, true)
	return o.close(o.str(b, "status", c.Status, false))
}

func appendEnvVar(b []byte, v Var) []byte {
	var o obj
	return o.close(o.str(o.open(b), v.Name, v.Value, true))
}

func appendList[T any](b []byte, xs []T, enc func([]byte, T) []byte) []byte {
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = enc(b, x)
	}
	return append(b, ']')
}

// obj writes one JSON object's members, commas between them.
type obj struct{ n int }

func (o *obj) open(b []byte) []byte { return append(b, '{') }

func (o *obj) close(b []byte) []byte { return append(b, '}') }

func (o *obj) key(b []byte, k string) []byte {
	if o.n > 0 {
		b = append(b, ',')
	}
	o.n++
	return append(appendString(b, k), ':')
}

func (o *obj) str(b []byte, k, v string, always bool) []byte {
	if v == "" && !always {
		return b
	}
	return appendString(o.key(b, k), v)
}

func (o *obj) num(b []byte, k string, v int) []byte {
	if v == 0 {
		return b
	}
	return strconv.AppendInt(o.key(b, k), int64(v), 10)
}

func (o *obj) flag(b []byte, k string, v bool) []byte {
	if !v {
		return b
	}
	return append(o.key(b, k), "true"...)
}
