package transport

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/nccl"
)

// analysis is one pass of the rules over the facts.
type analysis struct {
	f    facts.Transport
	v    nccl.Version
	s    nccl.Settings
	pred facts.TransportPrediction
	// ibPorts are the ports NCCL's IB transport takes, usable the HCAs
	// they belong to, by name.
	ibPorts []port
}

type port struct {
	hca  facts.HCA
	port facts.HCAPort
}

func (p port) String() string { return fmt.Sprintf("%s:%d", p.hca.Name, p.port.Num) }

// Predict runs the rules over the facts: the prediction, with every cause
// found whatever the job's shape.
func Predict(f facts.Transport) facts.TransportPrediction {
	a := analysis{f: f, s: f.NCCL.Settings}
	a.v, _ = nccl.ParseVersion(f.NCCL.Version)
	a.run()
	a.active()
	return a.pred
}

func (a *analysis) add(code, format string, args ...any) {
	a.pred.Causes = append(a.pred.Causes, facts.TransportCause{Code: code, Message: fmt.Sprintf(format, args...)})
}

func (a *analysis) run() {
	if a.f.Image.NCCL == "" {
		a.pred.Summary = "no NCCL in the image: nothing to predict"
		a.p2p()
		return
	}
	boot, known := nccl.FindInterfaces(a.f.Addresses, a.s, a.v, 1)
	if known && len(boot) == 0 {
		if v, _ := a.s.Get(nccl.SocketIfname); len(v) > 1 {
			a.add("socket-interface-unmatched", "NCCL_SOCKET_IFNAME=%q (%s) matches no interface of this network namespace %s: NCCL %s stops at init (\"Bootstrap : no socket interface found\")",
				v, a.s[nccl.SocketIfname].Source, a.usableWord(), a.v)
		} else {
			a.add("no-socket-interface", "this network namespace has no interface %s: NCCL's bootstrap cannot start", a.usableWord())
		}
		a.pred.Summary = "NCCL will fail at init: no socket interface"
		a.p2p()
		return
	}
	if len(boot) > 0 {
		a.pred.Bootstrap = boot[0].Name
	}
	plugin, pluginDevices := a.plugin()
	ib := a.ib()
	a.choose(plugin, pluginDevices, ib)
	if a.pred.Network == facts.NetIB {
		a.gdr()
	}
	if a.pred.Network == facts.NetIB || plugin != "" && a.pred.Network == plugin {
		a.memlock()
	}
	a.p2p()
}

// usableWord is what NCCL v asks of an interface.
func (a *analysis) usableWord() string {
	if a.v.AtLeast(2, 28, 3) {
		return "running, with an address"
	}
	return "with an address"
}

// choose is ncclNetInit: the first network, plugins then IB then Socket,
// that has devices and that NCCL_NET, when set, names.
func (a *analysis) choose(plugin string, pluginDevices []string, ib bool) {
	socket, _ := nccl.FindInterfaces(a.f.Addresses, a.s, a.v, nccl.MaxInterfaces)
	want, set := a.s.Get(nccl.Net)
	type net struct {
		name string
		ok   bool
	}
	nets := []net{{plugin, plugin != ""}, {facts.NetIB, ib}, {facts.NetSocket, len(socket) > 0}}
	for _, n := range nets {
		if !n.ok {
			continue
		}
		named := !set || want == "" || strings.EqualFold(want, n.name) ||
			n.name == plugin && !strings.EqualFold(want, facts.NetIB) && !strings.EqualFold(want, facts.NetSocket)
		if !named {
			continue
		}
		a.pred.Network = n.name
		break
	}
	switch a.pred.Network {
	case "":
		a.add("net-unavailable", "NCCL_NET=%q (%s) names no network with a device here: NCCL stops at init (\"Error: network %s not found\")",
			want, a.s[nccl.Net].Source, want)
		a.pred.Summary = "NCCL will fail at init: NCCL_NET=" + want + " has no device"
	case facts.NetSocket:
		for _, i := range socket {
			a.pred.Interfaces = append(a.pred.Interfaces, i.Name)
		}
		a.pred.Summary = "NET/Socket (TCP) on " + strings.Join(a.pred.Interfaces, ", ")
		a.virtualInterface(socket)
	case facts.NetIB:
		for _, p := range a.ibPorts {
			a.pred.Devices = append(a.pred.Devices, p.String())
		}
		a.pred.LinkLayer = linkLayers(a.ibPorts)
		a.pred.Summary = fmt.Sprintf("NET/IB on %s (%s)", list(a.pred.Devices), a.pred.LinkLayer)
	default:
		a.pred.Devices = pluginDevices
		a.pred.Summary = "net plugin " + plugin
		if len(pluginDevices) > 0 {
			a.pred.Summary += " on " + list(pluginDevices)
		}
	}
}

// plugin finds the net plugin NCCL will load, and the EFA devices an OFI
// plugin drives; it reports a plugin NCCL_NET_PLUGIN names but the loader
// cannot load, and EFA adapters left without one.
func (a *analysis) plugin() (string, []string) {
	value, set := a.s.Get(nccl.NetPlugin)
	named := set && value != "" && !strings.EqualFold(value, "none")
	var loaded facts.LoadedLibrary
	for _, p := range a.f.Image.Plugins {
		if p.Library.Found() {
			loaded = p.Library
			break
		}
		if named {
			what := "none of " + strings.Join(p.Names, ", ") + " is in the image"
			if p.Library.Path != "" {
				what = p.Library.Path + " cannot load: " + strings.Join(p.Library.Missing, ", ") + " not found"
			}
			a.add("net-plugin-missing", "NCCL_NET_PLUGIN=%q (%s): %s; NCCL goes on with its internal networks", value, a.s[nccl.NetPlugin].Source, what)
		}
	}
	var efa, efaUsable []string
	for _, h := range a.f.HCAs {
		if !EFA(h) {
			continue
		}
		efa = append(efa, h.Name)
		if a.opens(h) && a.providerLoads("efa") && slices.ContainsFunc(h.Ports, active) {
			efaUsable = append(efaUsable, h.Name)
		}
	}
	// An OFI plugin (aws-ofi-nccl) has devices only where EFA adapters
	// open through libfabric's efa provider, which is libibverbs'.
	ofi := strings.Contains(loaded.Path, "ofi")
	switch {
	case loaded.Path == "" && len(efa) > 0:
		a.add("efa-plugin-missing", "this node's EFA adapters (%s) are driven only by a net plugin (aws-ofi-nccl), and the image has none that loads: %s",
			list(efa), a.pluginTried())
	case ofi && len(efaUsable) == 0:
		a.devicesUnusable(efa)
		return "", nil
	case ofi:
		return loaded.Path, efaUsable
	}
	return loaded.Path, nil
}

func (a *analysis) pluginTried() string {
	var tried []string
	for _, p := range a.f.Image.Plugins {
		if p.Library.Path != "" && len(p.Library.Missing) > 0 {
			tried = append(tried, p.Library.Path+" needs "+strings.Join(p.Library.Missing, ", "))
			continue
		}
		tried = append(tried, strings.Join(p.Names, " or ")+" not found")
	}
	if len(tried) == 0 {
		return "NCCL_NET_PLUGIN=none"
	}
	return strings.Join(tried, "; ")
}

func active(p facts.HCAPort) bool { return p.State == "ACTIVE" }

// providerLoads reports whether libibverbs and the named provider load.
func (a *analysis) providerLoads(name string) bool {
	if !a.f.Image.Verbs.Found() || !slices.Contains(a.f.Image.Configured, name) {
		return false
	}
	for _, p := range a.f.Image.Providers {
		if p.Name == name {
			return p.Library.Found()
		}
	}
	return false
}

// ib is ncclIbInit over this rank's view: the ports of HCAs libibverbs
// lists and opens, ACTIVE, of link layer InfiniBand or Ethernet, taken by
// NCCL_IB_HCA. It reports why HCAs were left out and reports whether any
// port is left.
func (a *analysis) ib() bool {
	hcaValue, hcaSet := a.s.Get(nccl.IBHCA)
	filter := nccl.ParseList(hcaValue, nccl.MaxHCAs, a.v)
	disabled := nccl.Param(a.s, nccl.IBDisable, 0) == 1
	var candidates, down, unusable []string
	var unusableHCAs []facts.HCA
	for _, h := range a.f.HCAs {
		usable := a.f.Image.Verbs.Found() && a.opens(h) && h.Verbs != "" &&
			(ProviderFor(h) == "" || a.providerLoads(ProviderFor(h)))
		counted := false
		for _, p := range h.Ports {
			if p.LinkLayer != facts.LinkInfiniBand && p.LinkLayer != facts.LinkEthernet {
				continue
			}
			candidates = append(candidates, port{h, p}.String())
			if !filter.Match(h.Name, p.Num) {
				continue
			}
			if !active(p) {
				down = append(down, fmt.Sprintf("%s (%s, %s)", port{h, p}, p.State, p.PhysState))
				continue
			}
			if !usable {
				if !counted {
					unusableHCAs = append(unusableHCAs, h)
					counted = true
				}
				unusable = append(unusable, port{h, p}.String())
				continue
			}
			if len(a.ibPorts) < nccl.MaxHCAs {
				a.ibPorts = append(a.ibPorts, port{h, p})
			}
		}
	}
	switch {
	case len(candidates) == 0:
		if !slices.ContainsFunc(a.f.HCAs, EFA) {
			a.add("no-rdma-device", "no InfiniBand or RoCE device in /sys/class/infiniband: NCCL uses TCP sockets")
		}
		return false
	case disabled:
		a.add("ib-disabled", "NCCL_IB_DISABLE=1 (%s) turns off NCCL's IB transport and %s with it", a.s[nccl.IBDisable].Source, list(candidates))
		return false
	case hcaSet && len(a.ibPorts) == 0 && len(down) == 0 && len(unusable) == 0:
		a.add("ib-hca-unmatched", "NCCL_IB_HCA=%q (%s) takes none of %s: NCCL falls back to TCP sockets without a word above INFO",
			hcaValue, a.s[nccl.IBHCA].Source, list(candidates))
		return false
	}
	a.devicesUnusable(nil, unusableHCAs...)
	if len(down) > 0 {
		if len(a.ibPorts) == 0 && len(unusable) == 0 {
			a.add("ports-down", "every port NCCL would use is down: %s", list(down))
		} else {
			a.add("port-down", "ports down, left out by NCCL: %s", list(down))
		}
	}
	a.gids()
	return len(a.ibPorts) > 0
}

// devicesUnusable reports why HCAs cannot be opened through libibverbs;
// efa lists EFA adapters by name, hcas the others.
func (a *analysis) devicesUnusable(efa []string, hcas ...facts.HCA) {
	for _, name := range efa {
		for _, h := range a.f.HCAs {
			if h.Name == name {
				hcas = append(hcas, h)
			}
		}
	}
	if len(hcas) == 0 {
		return
	}
	if !a.f.Image.Verbs.Found() {
		a.add("libibverbs-missing", "NCCL cannot open libibverbs.so or libibverbs.so.1 from %s (%s), so it drives none of %s",
			a.f.Image.NCCL, verbsWhy(a.f.Image.Verbs), names(hcas))
		return
	}
	byCode := map[string][]string{}
	for _, h := range hcas {
		code, why := a.nodeCause(h)
		if code == "" {
			p := ProviderFor(h)
			code, why = "rdma-provider-missing", a.providerWhy(p)
		}
		byCode[code] = append(byCode[code], h.Name+" ("+why+")")
	}
	for _, c := range nodeCauses {
		if len(byCode[c.code]) > 0 {
			a.add(c.code, "%s: %s", c.words, list(byCode[c.code]))
		}
	}
}

// nodeCauses are the causes of HCAs whose devices do not open, in the
// order they are reported, with the words that name those HCAs.
var nodeCauses = []struct{ code, words string }{
	{"rdma-device-not-passed", "RDMA devices not in this container"},
	{"rdma-device-denied", "RDMA devices this container may not open (device cgroup)"},
	{"rdma-driver-not-loaded", "RDMA devices without their kernel verbs driver (ib_uverbs)"},
	{"rdma-provider-missing", "HCAs libibverbs has no provider for in this image"},
	{"rdma-verbs-failed", "HCAs libibverbs could not open"},
}

// opens reports whether h opens, by the active tier, else by its node.
func (a *analysis) opens(h facts.HCA) bool {
	if t := a.activeResult(h); t.ran {
		return t.opened
	}
	return h.Node.Open == facts.UverbsOK
}

// nodeCause is the cause of an HCA that does not open, "" when it opens.
func (a *analysis) nodeCause(h facts.HCA) (code, why string) {
	if t := a.activeResult(h); t.ran && !t.opened {
		return t.code, t.why
	}
	switch {
	case h.Verbs == "":
		return "rdma-driver-not-loaded", "no /sys/class/infiniband_verbs entry"
	case h.Node.Open == facts.UverbsOK:
		return "", ""
	case h.Node.Open == "ENOENT":
		return "rdma-device-not-passed", h.Node.Path + ": ENOENT"
	case h.Node.Open == "ENXIO":
		return "rdma-driver-not-loaded", h.Node.Path + ": ENXIO"
	}
	return "rdma-device-denied", h.Node.Path + ": " + h.Node.Open
}

func (a *analysis) providerWhy(name string) string {
	if name == "" {
		return "no known provider"
	}
	if !slices.Contains(a.f.Image.Configured, name) {
		return fmt.Sprintf("no %s.driver in /etc/libibverbs.d", name)
	}
	for _, p := range a.f.Image.Providers {
		if p.Name != name {
			continue
		}
		if p.Library.Path == "" {
			return fmt.Sprintf("lib%s-rdmav*.so not found", name)
		}
		return p.Library.Path + " needs " + strings.Join(p.Library.Missing, ", ")
	}
	return fmt.Sprintf("lib%s-rdmav*.so not found", name)
}

func verbsWhy(l facts.LoadedLibrary) string {
	if l.Path == "" {
		return "not in the image"
	}
	return l.Path + " needs " + strings.Join(l.Missing, ", ")
}

// gids checks the GID index NCCL_IB_GID_INDEX names on each RoCE port
// NCCL takes.
func (a *analysis) gids() {
	var empty []string
	for _, p := range a.ibPorts {
		if p.port.LinkLayer != facts.LinkEthernet {
			continue
		}
		i, fixed := nccl.RoCEGIDIndex(p.port.GIDs, a.s)
		if !fixed {
			continue
		}
		g := slices.IndexFunc(p.port.GIDs, func(g nccl.GID) bool { return g.Index == i })
		if g < 0 || !p.port.GIDs[g].Configured() {
			empty = append(empty, p.String())
		}
	}
	if len(empty) > 0 {
		v := a.s[nccl.IBGIDIndex]
		a.add("gid-index-empty", "NCCL_IB_GID_INDEX=%s (%s) names an empty GID entry on %s: RoCE connections there fail (\"ibv_modify_qp failed\")",
			v.Value, v.Source, list(empty))
	}
}

// virtualInterface reports a socket transport on a virtual interface
// (veth, bridge) chosen by NCCL's default while the namespace has a
// device's own interface.
func (a *analysis) virtualInterface(chosen []nccl.Interface) {
	if v, _ := a.s.Get(nccl.SocketIfname); len(v) > 1 || len(chosen) == 0 {
		return
	}
	kind := map[string]string{}
	for _, l := range a.f.Links {
		kind[l.Name] = l.Kind
	}
	first := chosen[0].Name
	if kind[first] == "" || first == "lo" {
		return
	}
	for _, addr := range a.f.Addresses {
		if kind[addr.Interface] == "" && addr.Interface != "lo" && addr.Running && !addr.Prefix.Addr().IsLoopback() {
			a.add("socket-virtual-interface", "NCCL's default takes %s (a %s interface) before %s: TCP traffic between nodes goes through it",
				first, kind[first], addr.Interface)
			return
		}
	}
}

func linkLayers(ports []port) string {
	var out []string
	for _, p := range ports {
		if !slices.Contains(out, p.port.LinkLayer) {
			out = append(out, p.port.LinkLayer)
		}
	}
	slices.Sort(out)
	return strings.Join(out, "+")
}

func names(hcas []facts.HCA) string {
	var out []string
	for _, h := range hcas {
		out = append(out, h.Name)
	}
	return list(out)
}

// list joins names, at most 16 of them.
func list(names []string) string {
	if len(names) > 16 {
		return strings.Join(names[:16], ", ") + fmt.Sprintf(" and %d more", len(names)-16)
	}
	return strings.Join(names, ", ")
}
