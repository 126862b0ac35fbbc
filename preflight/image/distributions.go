package image

import (
	"bufio"
	"bytes"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
)

// distInfo is one installed Python distribution, from its metadata
// directory's name. site and entry, where the scanner listed it, share the
// listing's strings: a huge site-packages costs no string per entry.
type distInfo struct {
	Name        string // normalized: "nvidia_cudnn_cu12"
	Version     string
	site, entry string
}

// dir is the metadata directory's path; "" from parseDistInfoName.
func (d distInfo) dir() string {
	if d.site == "" {
		return ""
	}
	return path.Join(d.site, d.entry)
}

// parseDistInfoName splits "<name>-<version>.dist-info",
// "<name>-<version>[-pyX.Y].egg-info" or "<name>-<version>-pyX.Y[-...].egg".
func parseDistInfoName(dir string) (distInfo, bool) {
	base, ok := strings.CutSuffix(dir, ".dist-info")
	egg := false
	if !ok {
		if base, ok = strings.CutSuffix(dir, ".egg-info"); !ok {
			if base, ok = strings.CutSuffix(dir, ".egg"); !ok {
				return distInfo{}, false
			}
		}
		egg = true
	}
	name, ver, ok := strings.Cut(base, "-")
	if !ok || name == "" || ver == "" {
		return distInfo{}, false
	}
	if egg {
		if i := strings.Index(ver, "-py"); i > 0 {
			ver = ver[:i]
		}
	}
	if ver == "" || !isDigit(ver[0]) {
		return distInfo{}, false
	}
	norm := normalizeName(name)
	if norm == "" {
		return distInfo{}, false
	}
	return distInfo{Name: norm, Version: ver}, true
}

// normalizeName folds a project name as wheel directories spell it (PEP
// 503 with "_").
func normalizeName(name string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(name) {
		if r == '-' || r == '_' || r == '.' {
			sep = true
			continue
		}
		if sep && b.Len() > 0 {
			b.WriteByte('_')
		}
		sep = false
		b.WriteRune(r)
	}
	return b.String()
}

// distInfos returns the distributions installed in sys.path directory sp,
// by name, built once per directory.
func (s *scanner) distInfos(sp string) map[string]distInfo {
	if out, ok := s.dists[sp]; ok {
		return out
	}
	if s.dists == nil {
		s.dists = map[string]map[string]distInfo{}
	}
	out := map[string]distInfo{}
	s.dists[sp] = out
	// A setuptools .egg on sys.path holds its metadata in EGG-INFO/.
	if d, ok := parseDistInfoName(path.Base(sp)); ok && strings.HasSuffix(sp, ".egg") {
		d.site, d.entry = sp, "EGG-INFO"
		out[d.Name] = d
	}
	for _, name := range s.list(sp) {
		d, ok := parseDistInfoName(name)
		if !ok || strings.HasSuffix(name, ".egg") {
			continue
		}
		if _, dup := out[d.Name]; !dup {
			d.site, d.entry = sp, name
			out[d.Name] = d
		}
	}
	return out
}

// firstDist returns the first of names installed.
func firstDist(dists map[string]distInfo, names ...string) (distInfo, bool) {
	for _, n := range names {
		if d, ok := dists[n]; ok {
			return d, true
		}
	}
	return distInfo{}, false
}

func distPath(sp string, d distInfo) string {
	if dir := d.dir(); dir != "" {
		return dir
	}
	return path.Join(sp, d.Name+"-"+d.Version+".dist-info")
}

// requirement is a Requires-Dist line reduced to a distribution (normalized)
// and the version it is pinned to ("==", "==X.*" taken as X) or must reach
// (">=", also for ~=), with the extras it asks for ("cuda-toolkit[cudart]")
// and the extra its marker names ('extra == "cudart"').
type requirement struct {
	Name, Op, Version string
	Extras            []string
	Extra             string
}

// parseRequiresDist reads the Requires-Dist headers of a METADATA file
// (core metadata, PEP 508), leaving out those without a lower bound.
func parseRequiresDist(src []byte) []requirement {
	var out []requirement
	metadataHeaders(src, func(k, v string) {
		if k != "requires-dist" {
			return
		}
		if r, ok := parseRequirement(v); ok {
			out = append(out, r)
		}
	})
	return out
}

// metadataHeaders calls f with each "Key: value" header, the key
// lower-cased, up to the blank line before the description.
func metadataHeaders(src []byte, f func(key, value string)) {
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			return
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			f(strings.ToLower(strings.TrimSpace(k)), v)
		}
	}
}

// parseRequirement reads "name[extras] (specifiers) ; marker".
func parseRequirement(s string) (requirement, bool) {
	s, marker, _ := strings.Cut(s, ";")
	s = strings.TrimSpace(s)
	end := strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z')
	})
	name, rest := s, ""
	if end >= 0 {
		name, rest = s[:end], s[end:]
	}
	if name == "" {
		return requirement{}, false
	}
	r := requirement{Name: normalizeName(name), Extra: markerExtra(marker)}
	if i := strings.IndexByte(rest, ']'); strings.HasPrefix(strings.TrimSpace(rest), "[") && i >= 0 {
		_, list, _ := strings.Cut(rest[:i], "[")
		for e := range strings.SplitSeq(list, ",") {
			if e = normalizeName(strings.TrimSpace(e)); e != "" && len(r.Extras) < 64 {
				r.Extras = append(r.Extras, e)
			}
		}
		rest = rest[i+1:]
	}
	rest = strings.Trim(strings.TrimSpace(rest), "()")
	for spec := range strings.SplitSeq(rest, ",") {
		spec = strings.TrimSpace(spec)
		for _, op := range []string{"===", "==", ">=", "~="} {
			v, ok := strings.CutPrefix(spec, op)
			if !ok {
				continue
			}
			v = strings.TrimSpace(v)
			if op == "==" {
				v = strings.TrimSuffix(v, ".*")
			}
			if v == "" || !isDigit(v[0]) || strings.ContainsAny(v, "*") {
				break
			}
			switch op {
			case "===", "==":
				r.Op, r.Version = "==", v
				return r, true
			default:
				r.Op, r.Version = ">=", v
			}
			break
		}
	}
	return r, r.Version != ""
}

// markerExtra is the extra an environment marker requires: `extra ==
// "cudart"` (PEP 508; the extra's name normalized as PEP 685 says).
func markerExtra(marker string) string {
	i := strings.Index(marker, "extra")
	if i < 0 {
		return ""
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(marker[i+len("extra"):]), "==")
	if !ok {
		return ""
	}
	rest = strings.TrimSpace(rest)
	if len(rest) < 2 || (rest[0] != '"' && rest[0] != '\'') {
		return ""
	}
	v, _, ok := strings.Cut(rest[1:], rest[:1])
	if !ok {
		return ""
	}
	return normalizeName(v)
}

// maxRecordsRead and maxRecordFile bound the nvidia-* RECORD files read for
// one file's wheel; NVIDIA's list at most a few hundred files.
const (
	maxRecordsRead = 64
	maxRecordFile  = 1 << 20
)

// recordOwner is the nvidia-* distribution in site-packages sp whose
// RECORD, pip's list of the files it installed, lists rel
// ("nvidia/cu13/lib/libcudart.so.13"); of two that list it (wheels that
// overwrote each other's file), the one whose size matches the file's.
func (s *scanner) recordOwner(sp, rel string) (distInfo, bool) {
	dists := s.distInfos(sp)
	var size int64 = -1
	if fi, err := s.root.Stat(path.Join(sp, rel)); err == nil {
		size = fi.Size()
	}
	var owner distInfo
	found, read := false, 0
	for _, name := range slices.Sorted(maps.Keys(dists)) {
		d := dists[name]
		if !strings.HasPrefix(name, "nvidia_") || d.dir() == "" {
			continue
		}
		if read++; read > maxRecordsRead {
			break
		}
		listed, sz := recordRow(s.readMax(path.Join(d.dir(), "RECORD"), maxRecordFile), rel)
		switch {
		case !listed:
		case sz == size:
			return d, true
		case !found:
			owner, found = d, true
		}
	}
	return owner, found
}

// recordRow finds file's row in RECORD src (the wheel spec's CSV of path,
// hash and size) and returns its size, -1 when the row gives none. Rows
// are matched unquoted: Python's csv quotes only a path holding a comma,
// a quote or a line break, which no library's name does.
func recordRow(src []byte, file string) (listed bool, size int64) {
	for line := range bytes.Lines(src) {
		rest, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte(file+","))
		if !ok {
			continue
		}
		i := bytes.LastIndexByte(rest, ',')
		n, err := strconv.ParseInt(string(rest[i+1:]), 10, 64)
		if i < 0 || err != nil || n < 0 {
			return true, -1
		}
		return true, n
	}
	return false, -1
}
