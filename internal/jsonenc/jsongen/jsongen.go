// Package jsongen writes, as Go source, JSON encoders without reflection
// (the strings and numbers are package jsonenc's): an AppendRecordJSON
// method on each of some struct types, writing every field whatever its
// omitempty, a nil pointer as null, a nil slice as [] and a nil map as {},
// the provenance record's form. A "record" tag, in json's syntax,
// overrides the json tag: `record:"-"` leaves a field out,
// `record:",omitempty"` keeps omitempty. Another package's type with an
// AppendRecordJSON method is written by it, so each package's encoder
// sits beside its types.
//
// The types are read from source with go/types, without the file being
// generated, so a stale one does not stop its regeneration. What
// encoding/json would write otherwise (interfaces, embedded fields,
// Marshal methods, ",string", ",omitzero", []byte, arrays, float32,
// non-string map keys, anonymous structs) fails, naming the field.
package jsongen

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/format"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// jsonencPath is the import path of the run-time half.
const jsonencPath = "github.com/gpu-preflight/gpu-preflight/internal/jsonenc"

// Generate returns the source of AppendRecordJSON for the struct types
// typeNames of the package in dir, to be saved there as output.
func Generate(dir, output string, typeNames ...string) ([]byte, error) {
	pkg, typeErrs, err := load(dir, output)
	if err != nil {
		return nil, err
	}
	g := &gen{pkg: pkg, typeErrs: errors.Join(typeErrs...), imports: map[string]string{},
		names: map[string]*types.Named{}, funcs: map[*types.Named]string{}, roots: map[*types.Named]bool{}}
	var roots []*types.Named
	for _, name := range typeNames {
		obj, ok := pkg.Scope().Lookup(name).(*types.TypeName)
		if !ok {
			return nil, fmt.Errorf("jsongen: package %s in %s has no type %s", pkg.Name(), dir, name)
		}
		root, ok := obj.Type().(*types.Named)
		if !ok || !isStruct(root) {
			return nil, fmt.Errorf("jsongen: %s.%s is not a struct type", pkg.Name(), name)
		}
		if _, err := g.funcFor(root); err != nil {
			return nil, err
		}
		roots = append(roots, root)
		g.roots[root] = true
	}
	for i := 0; i < len(g.queue); i++ {
		if err := g.structFunc(g.queue[i]); err != nil {
			return nil, err
		}
	}
	src, err := g.file(roots)
	if err != nil {
		return nil, err
	}
	out, err := format.Source(src)
	if err != nil {
		return nil, fmt.Errorf("jsongen: the generated source does not parse (a bug in jsongen): %w\n%s", err, src)
	}
	return out, nil
}

// load type-checks the package in dir without the file skip.
func load(dir, skip string) (*types.Package, []error, error) {
	bp, err := build.ImportDir(dir, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("jsongen: read package in %s: %w", dir, err)
	}
	if len(bp.CgoFiles) > 0 {
		return nil, nil, fmt.Errorf("jsongen: package %s in %s uses cgo, which jsongen does not read", bp.Name, dir)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	imports := map[string]bool{}
	for _, name := range bp.GoFiles {
		if name == skip {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, fmt.Errorf("jsongen: %w", err)
		}
		files = append(files, f)
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if p != "unsafe" && p != "C" {
				imports[p] = true
			}
		}
	}
	exports, err := exportFiles(dir, slices.Sorted(maps.Keys(imports)))
	if err != nil {
		return nil, nil, err
	}
	// Not fatal: the package may call the methods of the file left out.
	var typeErrs []error
	conf := types.Config{
		Importer: importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
			f, ok := exports[path]
			if !ok {
				return nil, fmt.Errorf("no export data for %s", path)
			}
			return os.Open(f)
		}),
		Error: func(err error) { typeErrs = append(typeErrs, err) },
	}
	pkg, _ := conf.Check(bp.Name, fset, files, nil)
	return pkg, typeErrs, nil
}

// exportFiles returns where go list -export left each package's export
// data, which covers what its exports need of its own imports.
func exportFiles(dir string, paths []string) (map[string]string, error) {
	out := map[string]string{}
	if len(paths) == 0 {
		return out, nil
	}
	args := append([]string{"list", "-e", "-export", "-f", "{{.ImportPath}}\t{{.Export}}\t{{with .Error}}{{.Err}}{{end}}"}, paths...)
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("jsongen: go list -export the imports of %s: %w: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	for line := range strings.SplitSeq(strings.TrimSuffix(string(b), "\n"), "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 {
			return nil, fmt.Errorf("jsongen: go list -export printed %q", line)
		}
		if f[2] != "" || f[1] == "" {
			return nil, fmt.Errorf("jsongen: build %s for its export data: %s", f[0], f[2])
		}
		out[f[0]] = f[1]
	}
	return out, nil
}

// gen is one generation.
type gen struct {
	pkg      *types.Package
	typeErrs error                   // the package's type errors, without the generated file
	imports  map[string]string       // path -> package name
	names    map[string]*types.Named // function name -> its type
	funcs    map[*types.Named]string // type -> its function's name
	roots    map[*types.Named]bool   // the types Generate was given
	queue    []*types.Named          // in the order first reached
	funcsSrc bytes.Buffer
}

// funcFor names the append function of struct type n, queueing it.
func (g *gen) funcFor(n *types.Named) (string, error) {
	if name, ok := g.funcs[n]; ok {
		return name, nil
	}
	obj := n.Obj()
	if n.TypeArgs().Len() > 0 || n.TypeParams().Len() > 0 {
		return "", fmt.Errorf("jsongen: %s is generic, which jsongen does not support", g.typeName(n))
	}
	name := "append" + obj.Name()
	if obj.Pkg() != g.pkg {
		if !obj.Exported() {
			return "", fmt.Errorf("jsongen: %s is unexported in another package; the generated code cannot name it", g.typeName(n))
		}
		name = "append" + upperFirst(obj.Pkg().Name()) + obj.Name()
	}
	if other, ok := g.names[name]; ok {
		return "", fmt.Errorf("jsongen: %s and %s would both be encoded by %s; rename one", g.typeName(other), g.typeName(n), name)
	}
	g.names[name] = n
	g.funcs[n] = name
	g.queue = append(g.queue, n)
	return name, nil
}

// typeName is n as the generated file writes it, importing its package.
func (g *gen) typeName(n *types.Named) string {
	obj := n.Obj()
	if obj.Pkg() == nil || obj.Pkg() == g.pkg {
		return obj.Name()
	}
	return g.use(obj.Pkg().Path(), obj.Pkg().Name()) + "." + obj.Name()
}

// use imports path as name.
func (g *gen) use(path, name string) string {
	g.imports[path] = name
	return name
}

type field struct {
	goName    string
	jsonName  string
	typ       types.Type
	omitEmpty bool
}

// fields reads st's fields as the form writes them.
func (g *gen) fields(owner string, st *types.Struct) ([]field, error) {
	var out []field
	seen := map[string]string{}
	for i := range st.NumFields() {
		v := st.Field(i)
		where := fmt.Sprintf("field %s of %s", v.Name(), owner)
		if v.Embedded() {
			return nil, fmt.Errorf("jsongen: %s is embedded: encoding/json promotes an embedded struct's fields, which jsongen does not; name the field", where)
		}
		if !v.Exported() {
			continue
		}
		tags := reflect.StructTag(st.Tag(i))
		tag := tags.Get("json")
		rec, hasRec := tags.Lookup("record")
		if tag == "-" && !hasRec || hasRec && rec == "-" {
			continue
		}
		f, err := parseTag(v, tag, where)
		if err != nil {
			return nil, err
		}
		f.omitEmpty = false
		if hasRec {
			recField, err := parseTag(v, rec, where)
			if err != nil {
				return nil, err
			}
			if name, _, _ := strings.Cut(rec, ","); name != "" {
				f.jsonName = name
			}
			f.omitEmpty = recField.omitEmpty
		}
		if prev, dup := seen[f.jsonName]; dup {
			return nil, fmt.Errorf("jsongen: fields %s and %s of %s have one JSON name %q (encoding/json would drop both)", prev, v.Name(), owner, f.jsonName)
		}
		seen[f.jsonName] = v.Name()
		out = append(out, f)
	}
	return out, nil
}

// parseTag reads field v's json or record tag.
func parseTag(v *types.Var, tag, where string) (field, error) {
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" || tag == "-" {
		name = v.Name()
	}
	if !plainName(name) {
		return field{}, fmt.Errorf("jsongen: %s has JSON name %q: jsongen takes only ASCII letters, digits, _, - and . (which need no escape)", where, name)
	}
	f := field{goName: v.Name(), jsonName: name, typ: v.Type()}
	for o := range strings.SplitSeq(opts, ",") {
		switch o {
		case "":
		case "omitempty":
			f.omitEmpty = true
		default:
			return field{}, fmt.Errorf("jsongen: %s has the tag option %q, which jsongen does not support", where, o)
		}
	}
	return f, nil
}

// structFunc writes the append function of struct type n.
func (g *gen) structFunc(n *types.Named) error {
	owner := n.Obj().Pkg().Name() + "." + n.Obj().Name()
	if err := g.refuseMarshaler(owner, n); err != nil {
		return err
	}
	fields, err := g.fields(owner, n.Underlying().(*types.Struct))
	if err != nil {
		return err
	}
	w := &writer{}
	// Whether a comma goes before a field: some, none, or maybe (after
	// omitempty fields only; the function tracks it in more).
	const (
		none = iota
		some
		maybe
	)
	state, usesMore := none, false
	w.lit("{")
	for i, f := range fields {
		before := state
		cond := ""
		if f.omitEmpty {
			if cond, err = nonEmpty(owner, f, "v."+f.goName); err != nil {
				return err
			}
		}
		if cond != "" {
			w.open("if " + cond)
		}
		switch before {
		case some:
			w.lit(",")
		case maybe:
			usesMore = true
			w.open("if more")
			w.lit(",")
			w.close()
		}
		w.lit(strconv.Quote(f.jsonName) + ":")
		if err := g.value(w, f.typ, "v."+f.goName, true, cond != "", 0, owner+"."+f.jsonName); err != nil {
			return err
		}
		if cond != "" {
			if before != some && i+1 < len(fields) {
				w.stmt("more = true")
			}
			w.close()
			if before == none {
				state = maybe
			}
		} else {
			state = some
		}
	}
	w.lit("}")
	w.flush()

	fmt.Fprintf(&g.funcsSrc, "\nfunc %s(e *jsonenc.Encoder, b []byte, v *%s) []byte {\n", g.funcs[n], g.typeName(n))
	if usesMore {
		g.funcsSrc.WriteString("more := false // a member was written\n")
	}
	g.funcsSrc.Write(w.b.Bytes())
	g.funcsSrc.WriteString("return b\n}\n")
	return nil
}

// nonEmpty is the condition under which an omitempty field is written; ""
// for a struct, never empty.
func nonEmpty(owner string, f field, x string) (string, error) {
	switch u := f.typ.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsBoolean != 0:
			return x, nil
		case u.Info()&types.IsString != 0:
			return x + ` != ""`, nil
		case u.Info()&types.IsNumeric != 0:
			return x + " != 0", nil
		}
	case *types.Pointer:
		return x + " != nil", nil
	case *types.Slice, *types.Map:
		return "len(" + x + ") != 0", nil
	case *types.Struct:
		return "", nil
	}
	return "", fmt.Errorf("jsongen: field %s of %s: omitempty on %s is not supported", f.goName, owner, f.typ)
}

// value writes the statements that append x of type t; depth numbers the
// loop variables, where names x in errors.
func (g *gen) value(w *writer, t types.Type, x string, addressable, notNil bool, depth int, where string) error {
	if err := g.refuseMarshaler(where, t); err != nil {
		return err
	}
	named, _ := t.(*types.Named)
	switch u := t.Underlying().(type) {
	case *types.Basic:
		return g.basic(w, t, u, x, where)
	case *types.Pointer:
		w.nilOr(x, notNil)
		if n, ok := u.Elem().(*types.Named); ok && isStruct(n) {
			if err := g.call(w, n, x, where); err != nil {
				return err
			}
		} else if err := g.value(w, u.Elem(), "*"+x, true, false, depth, where); err != nil {
			return err
		}
		w.endNilOr(notNil)
		return nil
	case *types.Slice:
		if b, ok := u.Elem().Underlying().(*types.Basic); ok && b.Kind() == types.Uint8 {
			return fmt.Errorf("jsongen: %s is a byte slice, which encoding/json writes as base64; jsongen does not", where)
		}
		i := fmt.Sprintf("i%d", depth)
		w.lit("[") // a nil slice ranges as an empty one
		w.open(fmt.Sprintf("for %s := range %s", i, x))
		w.open(i + " > 0")
		w.lit(",")
		w.close()
		if err := g.value(w, u.Elem(), x+"["+i+"]", true, false, depth+1, where+"[]"); err != nil {
			return err
		}
		w.close()
		w.lit("]")
		return nil
	case *types.Map:
		key, ok := u.Key().Underlying().(*types.Basic)
		if !ok || key.Kind() != types.String {
			return fmt.Errorf("jsongen: %s is a map with %s keys; jsongen takes only string keys", where, u.Key())
		}
		if err := g.refuseMarshaler(where+" key", u.Key()); err != nil {
			return err
		}
		j, k, mv := fmt.Sprintf("j%d", depth), fmt.Sprintf("k%d", depth), fmt.Sprintf("v%d", depth)
		jsonenc := g.use(jsonencPath, "jsonenc")
		w.lit("{")
		w.open(fmt.Sprintf("for %s, %s := range %s.SortedKeys(%s)", j, k, jsonenc, x))
		w.open(j + " > 0")
		w.lit(",")
		w.close()
		w.stmt(fmt.Sprintf("b = %s.AppendString(b, %s)", jsonenc, convert(k, u.Key(), types.Typ[types.String])))
		w.lit(":")
		w.stmt(fmt.Sprintf("%s := %s[%s]", mv, x, k))
		if err := g.value(w, u.Elem(), mv, true, false, depth+1, where+"{}"); err != nil {
			return err
		}
		w.close()
		w.lit("}")
		return nil
	case *types.Struct:
		if named == nil {
			return fmt.Errorf("jsongen: %s is an anonymous struct; give its type a name", where)
		}
		if !addressable {
			return fmt.Errorf("jsongen: %s is not addressable (a bug in jsongen)", where)
		}
		return g.call(w, named, "&"+x, where)
	default:
		return fmt.Errorf("jsongen: %s has type %s, which jsongen does not support", where, t)
	}
}

// call appends the struct n that the pointer p points at.
func (g *gen) call(w *writer, n *types.Named, p, where string) error {
	if n.Obj().Pkg() != g.pkg && hasRecordMethod(n) {
		w.stmt(fmt.Sprintf("b = %s.%s(e, b)", strings.TrimPrefix(p, "&"), recordMethod))
		return nil
	}
	name, err := g.funcFor(n)
	if err != nil {
		return fmt.Errorf("%w (at %s)", err, where)
	}
	w.stmt(fmt.Sprintf("b = %s(e, b, %s)", name, p))
	return nil
}

const recordMethod = "AppendRecordJSON"

// hasRecordMethod reports whether *n has the method Generate writes.
func hasRecordMethod(n *types.Named) bool {
	sel := types.NewMethodSet(types.NewPointer(n)).Lookup(n.Obj().Pkg(), recordMethod)
	if sel == nil {
		return false
	}
	sig := sel.Obj().Type().(*types.Signature)
	return sig.Params().Len() == 2 && sig.Results().Len() == 1 &&
		sig.Params().At(0).Type().String() == "*"+jsonencPath+".Encoder" &&
		sig.Params().At(1).Type().String() == "[]byte" && sig.Results().At(0).Type().String() == "[]byte"
}

// basic appends a bool, string or number.
func (g *gen) basic(w *writer, t types.Type, u *types.Basic, x, where string) error {
	info := u.Info()
	switch {
	case info&types.IsBoolean != 0:
		w.stmt(fmt.Sprintf("b = %s.AppendBool(b, %s)", g.use("strconv", "strconv"), convert(x, t, types.Typ[types.Bool])))
	case info&types.IsString != 0:
		w.stmt(fmt.Sprintf("b = %s.AppendString(b, %s)", g.use(jsonencPath, "jsonenc"), convert(x, t, types.Typ[types.String])))
	case info&types.IsInteger != 0 && info&types.IsUnsigned != 0:
		w.stmt(fmt.Sprintf("b = %s.AppendUint(b, %s, 10)", g.use("strconv", "strconv"), convert(x, t, types.Typ[types.Uint64])))
	case info&types.IsInteger != 0:
		w.stmt(fmt.Sprintf("b = %s.AppendInt(b, %s, 10)", g.use("strconv", "strconv"), convert(x, t, types.Typ[types.Int64])))
	case u.Kind() == types.Invalid:
		return fmt.Errorf("jsongen: %s has a type that does not type-check: %w", where, g.typeErrs)
	case u.Kind() == types.Float64:
		w.stmt(fmt.Sprintf("b = e.Float(b, %s, %s)", convert(x, t, types.Typ[types.Float64]), strconv.Quote(where)))
	default:
		return fmt.Errorf("jsongen: %s has type %s, which jsongen does not support", where, t)
	}
	return nil
}

func convert(x string, t, want types.Type) string {
	if types.Identical(t, want) {
		return x
	}
	return want.String() + "(" + x + ")"
}

// refuseMarshaler fails on a type whose methods encoding/json would call,
// but for a root, whose MarshalJSON may call its AppendRecordJSON.
func (g *gen) refuseMarshaler(where string, t types.Type) error {
	if n, ok := t.(*types.Named); !ok || g.roots[n] {
		return nil
	}
	ms := types.NewMethodSet(types.NewPointer(t))
	for _, m := range []string{"MarshalJSON", "MarshalText", "MarshalJSONTo"} {
		if sel := ms.Lookup(nil, m); sel != nil {
			return fmt.Errorf("jsongen: %s: type %s has a %s method, which encoding/json calls; jsongen does not", where, t, m)
		}
	}
	return nil
}

func isStruct(n *types.Named) bool {
	_, ok := n.Underlying().(*types.Struct)
	return ok
}

// plainName reports whether a member name needs no escape.
func plainName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

func upperFirst(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

func (g *gen) file(roots []*types.Named) ([]byte, error) {
	var b bytes.Buffer
	var names []string
	for _, r := range roots {
		names = append(names, g.pkg.Name()+"."+r.Obj().Name())
	}
	fmt.Fprintf(&b, "// Code generated by jsongen from %s; DO NOT EDIT.\n", strings.Join(names, ", "))
	fmt.Fprintf(&b, "// Edit the types (their struct tags) and run go generate (make generate).\n\npackage %s\n\n", g.pkg.Name())
	g.use(jsonencPath, "jsonenc")
	var std, other []string
	byName := map[string]string{}
	for path, name := range g.imports {
		if p, dup := byName[name]; dup {
			return nil, fmt.Errorf("jsongen: packages %s and %s are both named %s; jsongen does not alias imports", p, path, name)
		}
		byName[name] = path
		if strings.Contains(path, ".") {
			other = append(other, path)
		} else {
			std = append(std, path)
		}
	}
	slices.Sort(std)
	slices.Sort(other)
	b.WriteString("import (\n")
	for _, p := range std {
		fmt.Fprintf(&b, "%q\n", p)
	}
	b.WriteString("\n")
	for _, p := range other {
		fmt.Fprintf(&b, "%q\n", p)
	}
	b.WriteString(")\n")
	for _, r := range roots {
		fmt.Fprintf(&b, `
// %[1]s appends v with every field present, as the
// provenance record holds it. A NaN or infinity is e's error.
func (v *%[2]s) %[1]s(e *jsonenc.Encoder, b []byte) []byte {
	return %[3]s(e, b, v)
}
`, recordMethod, r.Obj().Name(), g.funcs[r])
	}
	b.Write(g.funcsSrc.Bytes())
	return b.Bytes(), nil
}

// writer collects one function's statements, joining literal bytes.
type writer struct {
	b       bytes.Buffer
	pending strings.Builder
}

func (w *writer) lit(s string) { w.pending.WriteString(s) }

func (w *writer) flush() {
	s := w.pending.String()
	w.pending.Reset()
	switch {
	case s == "":
	case len(s) == 1:
		fmt.Fprintf(&w.b, "b = append(b, %s)\n", strconv.QuoteRune(rune(s[0])))
	case !strings.Contains(s, "`"):
		fmt.Fprintf(&w.b, "b = append(b, `%s`...)\n", s)
	default:
		fmt.Fprintf(&w.b, "b = append(b, %s...)\n", strconv.Quote(s))
	}
}

func (w *writer) stmt(s string) {
	w.flush()
	w.b.WriteString(s + "\n")
}

// open starts a block: "if cond", "for ...", or a bare condition.
func (w *writer) open(head string) {
	w.flush()
	if !strings.HasPrefix(head, "if ") && !strings.HasPrefix(head, "for ") {
		head = "if " + head
	}
	w.b.WriteString(head + " {\n")
}

func (w *writer) els() {
	w.flush()
	w.b.WriteString("} else {\n")
}

// nilOr writes null for a nil x and opens the block for the other case.
func (w *writer) nilOr(x string, notNil bool) {
	if notNil {
		return
	}
	w.open("if " + x + " == nil")
	w.lit("null")
	w.els()
}

func (w *writer) endNilOr(notNil bool) {
	if !notNil {
		w.close()
	}
}

func (w *writer) close() {
	w.flush()
	w.b.WriteString("}\n")
}
