package provline

import (
	"crypto/sha256"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/report/diff"
	"github.com/gpu-preflight/gpu-preflight/report/trace/jsonstream"
)

// Builder reduces a record as its tokens come: Start and End for objects
// and arrays, Key for member names, String, Number and Bool for values.
// ReadObject drives it from a jsonstream.Decoder. Its memory is bounded
// whatever the record holds: values are cut as they come, lists hold at
// most maxHeld elements.
type Builder struct {
	Scratch *Scratch // when set, holds the fresh values
	run     Run
	outcome Outcome // run.Outcome's, when it has one
	stack   []*node // the node of each open object or array; nil below one not kept
	key     *node   // the node of the member whose name came last
	depth   int     // open containers below the deepest kept one

	schema  bool // a schemaVersion member at the top
	event   string
	time    string
	gpu     GPU
	fw      Framework
	check   Check
	req     Var
	envName string
	devices []string
	lists   [nLists]list
	argv    int
	cache   map[string]string // values seen before: a fleet repeats most
	buf     []byte
	last    []string // per node, the last value read there
	seqs    [][]member
	raw     int         // the record's bytes as read, by ReadObject
	rawList [nLists]int // each list's
	odd     bool        // a value may take more bytes written than read
}

// member is a member name an object had, and its node: the members of the
// last object read at a node, in order. Records of one writer come with
// their members in one order, so each name is compared once, not looked
// up.
type member struct {
	name string
	n    *node
}

// listNodes are the nodes of tree that are lists with a budget.
func listNodes() [nLists]*node {
	host, image := tree.kids["host"], tree.kids["image"]
	return [nLists]*node{lGPUs: host.kids["gpus"], lRequirements: image.kids["requirements"],
		lCompat: image.kids["compat"], lFrameworks: image.kids["frameworks"],
		lArchs: image.kids["frameworks"].elem.kids["archs"], lChecks: tree.kids["checks"],
		lBlocking: tree.kids["decision"].kids["blocking"], lEnv: tree.kids["env"]}
}

// nodes counts the nodes of tree, numbered by numberNodes.
var nodes = numberNodes(tree, 0)

func numberNodes(n *node, next int) int {
	if n == nil {
		return next
	}
	n.id, n.list = next, -1
	for l, ln := range listNodes() {
		if ln == n {
			n.list = l
		}
	}
	next++
	for _, k := range n.kids {
		next = numberNodes(k, next)
	}
	next = numberNodes(n.any, next)
	return numberNodes(n.elem, next)
}

// maxCache bounds the values a Builder remembers.
const maxCache = 4096

// node is a place in the record: its members, its elements, and what a
// value there sets.
type node struct {
	id    int // its index in a Builder's memory of what came before
	list  int // its list (lGPUs...), for the bytes it read; -1 for none
	kids  map[string]*node
	any   *node // any member name (env)
	elem  *node // an array's elements
	limit int   // a string value's cap; 0 when no string is kept here
	fresh bool  // its value differs from run to run: not worth remembering
	str   func(*Builder, string)
	num   func(*Builder, int)
	bool  func(*Builder, bool)
	start func(*Builder)
	end   func(*Builder)
}

// Lists with a budget.
const (
	lGPUs = iota
	lRequirements
	lCompat
	lFrameworks
	lArchs
	lChecks
	lBlocking
	lEnv
	nLists
)

var budgets = [nLists]int{budgetGPUs, budgetRequirements, budgetCompat, budgetFrameworks, budgetArchs,
	budgetChecks, budgetBlocking, budgetEnv}

func str(limit int, set func(*Builder, string)) *node { return &node{limit: limit, str: set} }

func fresh(limit int, set func(*Builder, string)) *node {
	n := str(limit, set)
	n.fresh = true
	return n
}

func integer(set func(*Builder, int)) *node { return &node{num: set} }

func boolean(set func(*Builder, bool)) *node { return &node{bool: set} }

func object(kids map[string]*node) *node { return &node{kids: kids} }

// tree is the record's shape as far as a Run keeps it, and the finished
// line's members at its top.
var tree = object(map[string]*node{
	"schemaVersion": str(capShort, func(b *Builder, s string) { b.run.SchemaVersion, b.schema = s, true }),
	"runId":         fresh(capVersion, func(b *Builder, s string) { b.run.RunID = s }),
	"startedAt":     fresh(capVersion, func(b *Builder, s string) { b.run.StartedAt = s }),
	"tool":          object(map[string]*node{"version": str(capTool, func(b *Builder, s string) { b.run.Tool = s })}),
	"host": object(map[string]*node{
		"hostname": str(capName, func(b *Builder, s string) { b.run.Host.Hostname = s }),
		"driver": object(map[string]*node{
			"version":          str(capVersion, func(b *Builder, s string) { b.run.Host.Driver.Version = s }),
			"cudaVersion":      str(capShort, func(b *Builder, s string) { b.run.Host.Driver.CUDAVersion = s }),
			"openKernelModule": boolean(func(b *Builder, v bool) { b.run.Host.Driver.OpenKernelModule = v }),
			"branch":           object(map[string]*node{"name": str(capShort, func(b *Builder, s string) { b.run.Host.Driver.Branch = s })}),
		}),
		"gpus": {elem: &node{
			start: func(b *Builder) { b.gpu = GPU{Count: 1} },
			end:   (*Builder).endGPU,
			kids: map[string]*node{
				"name":              str(capName, func(b *Builder, s string) { b.gpu.Name = s }),
				"brand":             str(capShort, func(b *Builder, s string) { b.gpu.Brand = s }),
				"computeCapability": str(capShort, func(b *Builder, s string) { b.gpu.ComputeCapability = s }),
				"migMode":           str(capShort, func(b *Builder, s string) { b.gpu.MIGMode = s }),
				"persistenceMode":   str(capShort, func(b *Builder, s string) { b.gpu.PersistenceMode = s }),
				"count":             integer(func(b *Builder, n int) { b.gpu.Count = max(n, 1) }),
			},
		}},
		"transport": object(map[string]*node{"prediction": {end: (*Builder).endPrediction, kids: map[string]*node{
			"network":   str(capName, func(b *Builder, s string) { b.run.Host.Transport.Network = s }),
			"linkLayer": str(capShort, func(b *Builder, s string) { b.run.Host.Transport.LinkLayer = s }),
			"devices": {elem: str(capName, func(b *Builder, s string) {
				if len(b.devices) < maxHeld {
					b.devices = append(b.devices, s)
				}
			})},
		}}}),
		"cuda": object(map[string]*node{
			"mode":             str(capShort, func(b *Builder, s string) { b.run.Host.CUDA.Mode = s }),
			"outcome":          str(capShort, func(b *Builder, s string) { b.run.Host.CUDA.Outcome = s }),
			"driverApiVersion": integer(func(b *Builder, n int) { b.run.Host.CUDA.DriverAPIVersion = n }),
		}),
	}),
	"image": object(map[string]*node{
		"cudaVersion":     str(capShort, func(b *Builder, s string) { b.run.Image.CUDAVersion = s }),
		"cudaVersionFull": str(capVersion, func(b *Builder, s string) { b.run.Image.CUDAVersionFull = s }),
		"requirements": {elem: &node{
			start: func(b *Builder) { b.req = Var{} },
			end: func(b *Builder) {
				b.run.Image.Requirements = held(b, lRequirements, b.run.Image.Requirements, b.req, appendRequirement)
			},
			kids: map[string]*node{
				"var":   str(capName, func(b *Builder, s string) { b.req.Name = s }),
				"value": str(capRef, func(b *Builder, s string) { b.req.Value = s }),
			},
		}},
		"requireDisabled": boolean(func(b *Builder, v bool) { b.run.Image.RequireDisabled = v }),
		"cudnnVersion":    str(capVersion, func(b *Builder, s string) { b.run.Image.CuDNNVersion = s }),
		"ncclVersion":     str(capVersion, func(b *Builder, s string) { b.run.Image.NCCLVersion = s }),
		"tensorrtVersion": str(capVersion, func(b *Builder, s string) { b.run.Image.TensorRTVersion = s }),
		"compat": {elem: object(map[string]*node{
			"driverVersion": str(capVersion, func(b *Builder, s string) {
				b.run.Image.Compat = held(b, lCompat, b.run.Image.Compat, s, appendString)
			}),
		})},
		"frameworks": {elem: &node{
			start: func(b *Builder) { b.fw = Framework{}; b.lists[lArchs] = list{} },
			end:   (*Builder).endFramework,
			kids: map[string]*node{
				"name":         str(capName, func(b *Builder, s string) { b.fw.Name = s }),
				"version":      str(capVersion, func(b *Builder, s string) { b.fw.Version = s }),
				"cudaVersion":  str(capShort, func(b *Builder, s string) { b.fw.CUDAVersion = s }),
				"cudnnVersion": str(capShort, func(b *Builder, s string) { b.fw.CuDNNVersion = s }),
				"build":        str(capShort, func(b *Builder, s string) { b.fw.Build = s }),
				"archs": {elem: str(capShort, func(b *Builder, s string) {
					if b.fw.Archs == nil && b.lists[lArchs].over == 0 {
						b.fw.Archs = b.spareArchs()
					}
					b.fw.Archs = held(b, lArchs, b.fw.Archs, s, appendString)
				})},
			},
		}},
		"ref":      str(capRef, func(b *Builder, s string) { b.run.Image.Ref = s }),
		"digest":   str(capDigest, func(b *Builder, s string) { b.run.Image.Digest = s }),
		"revision": str(capVersion, func(b *Builder, s string) { b.run.Image.Revision = s }),
	}),
	"checks": {elem: &node{
		start: func(b *Builder) { b.check = Check{} },
		end:   func(b *Builder) { b.run.Checks = held(b, lChecks, b.run.Checks, b.check, appendCheck) },
		kids: map[string]*node{
			"id":     str(capName, func(b *Builder, s string) { b.check.ID = s }),
			"status": str(capShort, func(b *Builder, s string) { b.check.Status = s }),
		},
	}},
	"decision": object(map[string]*node{
		"policy":    str(capShort, func(b *Builder, s string) { b.run.Decision.Policy = s }),
		"action":    str(capShort, func(b *Builder, s string) { b.run.Decision.Action = s }),
		"exitCode":  integer(func(b *Builder, n int) { b.run.Decision.ExitCode = n }),
		"nodeFault": boolean(func(b *Builder, v bool) { b.run.Decision.NodeFault = v }),
		"blocking": {elem: str(capName, func(b *Builder, s string) {
			b.run.Decision.Blocking = held(b, lBlocking, b.run.Decision.Blocking, s, appendString)
		})},
	}),
	"command": object(map[string]*node{
		"argv": {elem: str(capName, func(b *Builder, s string) {
			if b.argv == 0 {
				b.run.Command.Program = s
			}
			b.argv++
		})},
		"supervised":  boolean(func(b *Builder, v bool) { b.run.Command.Supervised = v }),
		"argvSha256":  str(capSHA, func(b *Builder, s string) { b.run.Command.ArgvSHA256 = s }),
		"argvRecord":  str(capShort, func(b *Builder, s string) { b.run.Command.ArgvRecord = s }),
		"argvDropped": integer(func(b *Builder, n int) { b.run.Command.ArgvDropped = n }),
	}),
	"orchestrator": object(map[string]*node{
		"jobId":       str(capName, func(b *Builder, s string) { b.run.Orchestrator.JobID = s }),
		"jobIdSource": str(capShort, func(b *Builder, s string) { b.run.Orchestrator.JobIDSource = s }),
		"kubernetes": object(map[string]*node{
			"namespace":       str(capName, func(b *Builder, s string) { b.run.Orchestrator.Namespace = s }),
			"podName":         fresh(capName, func(b *Builder, s string) { b.run.Orchestrator.PodName = s }),
			"nodeName":        str(capName, func(b *Builder, s string) { b.run.Orchestrator.NodeName = s }),
			"completionIndex": str(capShort, func(b *Builder, s string) { b.run.Orchestrator.CompletionIdx = s }),
		}),
		"slurm": object(map[string]*node{
			"nodeName": str(capName, func(b *Builder, s string) { b.run.Orchestrator.SlurmNodeName = s }),
			"procId":   str(capShort, func(b *Builder, s string) { b.run.Orchestrator.SlurmProcID = s }),
		}),
		"torchrun": object(map[string]*node{"rank": str(capShort, func(b *Builder, s string) { b.run.Orchestrator.TorchrunRank = s })}),
		"paddle":   object(map[string]*node{"trainerId": str(capShort, func(b *Builder, s string) { b.run.Orchestrator.PaddleTrainerID = s })}),
		"kubeflow": object(map[string]*node{"jobName": str(capName, func(b *Builder, s string) { b.run.Orchestrator.KubeflowJobID = s })}),
	}),
	"env": {any: str(capName, func(b *Builder, s string) {
		b.run.Env = held(b, lEnv, b.run.Env, Var{b.envName, s}, appendEnvVar)
	})},
	"outcome": {
		start: func(b *Builder) { b.outcome = Outcome{}; b.run.Outcome = &b.outcome },
		kids: map[string]*node{
			"exitCode":   integer(func(b *Builder, n int) { b.run.Outcome.ExitCode = n }),
			"signal":     integer(func(b *Builder, n int) { b.run.Outcome.Signal = n }),
			"notStarted": str(capText, func(b *Builder, s string) { b.run.Outcome.NotStarted = s }),
		},
	},
	// The line that ends a supervised run.
	"event":      str(capShort, func(b *Builder, s string) { b.event = s }),
	"time":       fresh(capVersion, func(b *Builder, s string) { b.time = s }),
	"exitCode":   integer(func(b *Builder, n int) { b.finished().ExitCode = n }),
	"signal":     integer(func(b *Builder, n int) { b.finished().Signal = n }),
	"notStarted": str(capText, func(b *Builder, s string) { b.finished().NotStarted = s }),
})

// endPrediction keeps the devices as one value, in order.
func (b *Builder) endPrediction() {
	slices.Sort(b.devices)
	b.run.Host.Transport.Devices = Cap([]byte(strings.Join(b.devices, " ")), false, [32]byte{}, capText)
}

// finished is the outcome a finished line's members set.
func (b *Builder) finished() *Outcome {
	if b.run.Outcome == nil {
		b.outcome = Outcome{}
		b.run.Outcome = &b.outcome
	}
	return b.run.Outcome
}

// Reset makes b ready for a record, keeping its lists' room: a Run that
// Run returned is good until then.
func (b *Builder) Reset() {
	r := &b.run
	b.run = Run{Host: Host{GPUs: r.Host.GPUs[:0]}, Checks: r.Checks[:0], Env: r.Env[:0],
		Image:    Image{Requirements: r.Image.Requirements[:0], Compat: r.Image.Compat[:0], Frameworks: r.Image.Frameworks[:0]},
		Decision: Decision{Blocking: r.Decision.Blocking[:0]}}
	b.stack = b.stack[:0]
	b.key, b.depth = nil, 0
	b.schema, b.event, b.time, b.argv = false, "", "", 0
	b.devices = b.devices[:0]
	b.lists = [nLists]list{}
	b.raw, b.rawList, b.odd = 0, [nLists]int{}, true
}

// Start opens an object or an array.
func (b *Builder) Start(array bool) {
	if b.depth > 0 {
		b.depth++
		return
	}
	var n *node
	switch {
	case len(b.stack) == 0:
		n = tree
	case b.parentArray():
		n = b.top().elem
	default:
		n = b.key
	}
	if n == nil || (array && n.elem == nil) || (!array && n.kids == nil && n.any == nil) {
		b.depth = 1
		return
	}
	if n.start != nil {
		n.start(b)
	}
	b.stack = append(b.stack, n)
	b.key = nil
}

func (b *Builder) top() *node { return b.stack[len(b.stack)-1] }

// parentArray reports whether the open container is an array.
func (b *Builder) parentArray() bool {
	return len(b.stack) > 0 && b.top().elem != nil
}

// End closes the open object or array.
func (b *Builder) End() {
	if b.depth > 0 {
		b.depth--
		return
	}
	if len(b.stack) == 0 {
		return
	}
	n := b.top()
	b.stack = b.stack[:len(b.stack)-1]
	if n.end != nil {
		n.end(b)
	}
	b.key = nil
}

// Key is a member name of the open object.
func (b *Builder) Key(k []byte) {
	if b.depth > 0 || len(b.stack) == 0 {
		return
	}
	n := b.top()
	if n.any != nil {
		b.envName = Cap(k, false, [sha256.Size]byte{}, capName)
		b.key = nil
		if diff.Tuning(b.envName) || isMarker(b.envName) {
			b.key = n.any
		}
		return
	}
	b.key = n.kids[string(k)]
}

// leaf is the node the next value lands on; nil when none is kept.
func (b *Builder) leaf() *node {
	if b.depth > 0 || len(b.stack) == 0 {
		return nil
	}
	if b.parentArray() {
		return b.top().elem
	}
	return b.key
}

// Wants reports whether b keeps the next value when it is a string.
func (b *Builder) Wants() bool {
	n := b.leaf()
	return n != nil && n.str != nil
}

// String is a string value: its first bytes, whether there were more,
// and then the digest of the whole (jsonstream.Decoder.TextSum).
func (b *Builder) String(s []byte, more bool, sum [sha256.Size]byte) {
	if n := b.leaf(); n != nil && n.str != nil {
		n.str(b, b.value(s, more, sum, n))
	}
	b.key = nil
}

// value is s cut to limit, the string made once for values seen before.
func (b *Builder) value(s []byte, more bool, sum [sha256.Size]byte, n *node) string {
	limit := n.limit
	if n.fresh && b.Scratch != nil && !more && encodedLen(s) <= limit {
		return b.Scratch.Bytes(s)
	}
	if more || len(s) > limit || n.fresh {
		return Cap(s, more, sum, limit)
	}
	if v, ok := b.cache[string(s)]; ok {
		return v
	}
	v := Cap(s, more, sum, limit)
	if len(v) == len(s) && len(b.cache) < maxCache {
		if b.cache == nil {
			b.cache = map[string]string{}
		}
		b.cache[v] = v
	}
	return v
}

// Keeps reports whether b keeps any of the last-named member's value.
func (b *Builder) Keeps() bool {
	return b.depth == 0 && len(b.stack) > 0 && b.key != nil
}

// Number is a number value.
func (b *Builder) Number(raw []byte) {
	if n := b.leaf(); n != nil && n.num != nil {
		v, err := strconv.ParseInt(string(raw), 10, 32)
		if err == nil {
			n.num(b, int(v))
		}
	}
	b.key = nil
}

// Bool is true or false.
func (b *Builder) Bool(v bool) {
	if n := b.leaf(); n != nil && n.bool != nil {
		n.bool(b, v)
	}
	b.key = nil
}

// Skip is a value b does not keep (null, a string it does not want).
func (b *Builder) Skip() { b.key = nil }

// Record reports whether b saw a schemaVersion at its top.
func (b *Builder) Record() bool { return b.schema }

// Run is what b read, and whether it was a record.
func (b *Builder) Run() (Run, bool) {
	if !b.schema {
		return Run{}, false
	}
	r := b.run
	sortVars(r.Env)
	if b.fits(&r) {
		return r, true
	}
	for _, tight := range []bool{false, true} {
		r, ls := b.run.clone(), b.lists
		if tight {
			r.tighten()
		}
		r.finish(&ls, tight)
		if tight || r.size(&b.buf)+maxOutcomeBytes <= MaxRecordBytes {
			return r, true
		}
	}
	panic("unreachable")
}

// fits reports whether r is reduced already: no list over its budget or
// with elements folded, and room for any outcome.
func (b *Builder) fits(r *Run) bool {
	for _, l := range b.lists {
		if l.over > 0 {
			return false
		}
	}
	// Written again, a record read by ReadObject takes no more bytes than
	// it was read in, unless a value held an odd character.
	if !b.odd && b.raw+maxOutcomeBytes <= MaxRecordBytes {
		within := true
		for l, n := range b.rawList {
			within = within && n <= budgets[l]
		}
		if within {
			return true
		}
	}
	buf := b.buf[:0]
	within := func(n int, budget int) bool { return n <= budget }
	ok := within(listSize(&buf, r.Host.GPUs, appendGPU), budgetGPUs) &&
		within(listSize(&buf, r.Image.Requirements, appendRequirement), budgetRequirements) &&
		within(listSize(&buf, r.Image.Compat, appendString), budgetCompat) &&
		within(listSize(&buf, r.Image.Frameworks, appendFramework), budgetFrameworks) &&
		within(listSize(&buf, r.Checks, appendCheck), budgetChecks) &&
		within(listSize(&buf, r.Decision.Blocking, appendString), budgetBlocking) &&
		within(listSize(&buf, r.Env, appendEnvVar), budgetEnv)
	b.buf = buf
	return ok && r.size(&b.buf)+maxOutcomeBytes <= MaxRecordBytes
}

func listSize[T any](buf *[]byte, xs []T, enc func([]byte, T) []byte) int {
	n := 2 + max(len(xs)-1, 0)
	for _, x := range xs {
		*buf = enc((*buf)[:0], x)
		n += len(*buf)
	}
	return n
}

// IsFinished reports whether b read the line that ends a supervised run.
func (b *Builder) IsFinished() bool { return !b.schema && b.event == "finished" && b.run.RunID != "" }

// Finished is the finished line b read, if it was one.
func (b *Builder) Finished() (Finished, bool) {
	if b.schema || b.event != "finished" || b.run.RunID == "" {
		return Finished{}, false
	}
	f := Finished{RunID: b.run.RunID, Time: b.time}
	if b.run.Outcome != nil {
		f.Outcome = *b.run.Outcome
	}
	return f, true
}

func (b *Builder) endGPU() {
	gs := b.run.Host.GPUs
	if n := len(gs); n > 0 && b.lists[lGPUs].over == 0 {
		last := &gs[n-1]
		if g := b.gpu; g.Name == last.Name && g.Brand == last.Brand && g.ComputeCapability == last.ComputeCapability &&
			g.MIGMode == last.MIGMode && g.PersistenceMode == last.PersistenceMode {
			last.Count += g.Count
			return
		}
	}
	b.run.Host.GPUs = held(b, lGPUs, gs, b.gpu, appendGPU)
}

// spareArchs is, emptied, the archs of the framework the next one replaces.
func (b *Builder) spareArchs() []string {
	fws := b.run.Image.Frameworks
	if len(fws) < cap(fws) {
		return fws[:len(fws)+1][len(fws)].Archs[:0]
	}
	return nil
}

func (b *Builder) endFramework() {
	b.fw.Archs = fit(b.fw.Archs, &b.lists[lArchs], budgetArchs, &b.buf, appendString, markerString)
	b.run.Image.Frameworks = held(b, lFrameworks, b.run.Image.Frameworks, b.fw, appendFramework)
}

// held appends x to xs, or past maxHeld folds it into the list's marker.
func held[T any](b *Builder, l int, xs []T, x T, enc func([]byte, T) []byte) []T {
	if len(xs) < maxHeld && b.lists[l].over == 0 {
		return append(xs, x)
	}
	b.lists[l].fold(enc(nil, x), weightOf(x))
	return xs
}

// ReadObject reads the record whose ObjectStart d just returned, to its
// end: the members the record keeps are read as values, the others
// skipped whole.
func (b *Builder) ReadObject(d *jsonstream.Decoder) error {
	b.Reset()
	start := d.Offset()
	d.Odd()
	err := b.readObject(d, tree)
	b.raw, b.odd = int(d.Offset()-start)+1, d.Odd()
	return err
}

func (b *Builder) readObject(d *jsonstream.Decoder, n *node) error {
	if b.seqs == nil {
		b.seqs, b.last = make([][]member, nodes), make([]string, nodes)
	}
	seq, next := b.seqs[n.id], 0
	defer func() { b.seqs[n.id] = seq }()
	for {
		k, err := d.Next()
		if err != nil {
			return err
		}
		if k == jsonstream.ObjectEnd {
			return nil
		}
		if k != jsonstream.Key {
			return errNotObject
		}
		key, _, err := d.Text(maxKey)
		if err != nil {
			return err
		}
		var m member
		if next < len(seq) && seq[next].name == string(key) {
			m = seq[next]
		} else {
			m = member{name: string(key)}
			if n.any != nil {
				if diff.Tuning(m.name) || isMarker(m.name) {
					m.n = n.any
				}
			} else {
				m.n = n.kids[m.name]
			}
			seq = append(seq[:next], m)
		}
		next++
		if n.any != nil {
			b.envName = m.name
		}
		if err := b.readValue(d, m.n); err != nil {
			return err
		}
	}
}

var errNotObject = errors.New("not a JSON object")

// readValue reads the next value into n, or skips it when n keeps none.
func (b *Builder) readValue(d *jsonstream.Decoder, n *node) error {
	k, err := d.Next()
	if err != nil {
		return err
	}
	if k == jsonstream.EOF || k == jsonstream.ObjectEnd || k == jsonstream.ArrayEnd {
		return errNotObject
	}
	return b.readToken(d, k, n)
}

// readToken reads the value k starts into n.
func (b *Builder) readToken(d *jsonstream.Decoder, k jsonstream.Kind, n *node) error {
	switch k {
	case jsonstream.ObjectStart, jsonstream.ArrayStart:
		if n == nil || k == jsonstream.ObjectStart && n.kids == nil && n.any == nil || k == jsonstream.ArrayStart && n.elem == nil {
			return d.SkipContainer()
		}
		if n.start != nil {
			n.start(b)
		}
		start := d.Offset()
		var err error
		if k == jsonstream.ObjectStart {
			err = b.readObject(d, n)
		} else {
			err = b.readArray(d, n.elem)
		}
		if n.list >= 0 {
			b.rawList[n.list] += int(d.Offset()-start) + 1
		}
		if err == nil && n.end != nil {
			n.end(b)
		}
		return err
	case jsonstream.String:
		if n == nil || n.str == nil {
			return nil // Next skips it
		}
		t, more, sum, err := d.TextSum(capRef)
		if err != nil {
			return err
		}
		if !more && !n.fresh && b.last[n.id] == string(t) && len(t) > 0 {
			n.str(b, b.last[n.id])
			return nil
		}
		v := b.value(t, more, sum, n)
		if !n.fresh { // a fresh value's bytes are the Scratch's
			b.last[n.id] = v
		}
		n.str(b, v)
	case jsonstream.Number:
		if n != nil && n.num != nil {
			if v, err := strconv.ParseInt(string(d.Raw()), 10, 32); err == nil {
				n.num(b, int(v))
			}
		}
	case jsonstream.True, jsonstream.False:
		if n != nil && n.bool != nil {
			n.bool(b, k == jsonstream.True)
		}
	}
	return nil
}

func (b *Builder) readArray(d *jsonstream.Decoder, elem *node) error {
	for {
		k, err := d.Next()
		if err != nil {
			return err
		}
		switch k {
		case jsonstream.ArrayEnd:
			return nil
		case jsonstream.EOF, jsonstream.ObjectEnd:
			return errNotObject
		}
		if err := b.readToken(d, k, elem); err != nil {
			return err
		}
	}
}
