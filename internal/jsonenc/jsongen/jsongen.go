// Package jsongen writes, as Go source, a JSON encoder for one struct type
// and every type it holds: an AppendJSON method on the type and one append
// method per struct type reached, each writing the fields its struct tags
// name, in their order, with their omitempty. The output is byte for byte
// what encoding/json's Marshal writes for the same value, with no
// reflection when it runs; the strings and numbers are package jsonenc's.
//
// The generator reads the types with go/types from the package's source
// (its imports from the compiler's export data, found with `go list
// -export`), not by reflection from a compiled package, so that a
// generated file gone stale, one that no longer compiles after a field was
// renamed, does not stop its own regeneration: it is left out of the
// package when the package is read.
//
// What encoding/json would encode in a way the generator does not write
// makes Generate fail, naming the type and field, instead of producing an
// encoder that differs: interfaces, embedded fields, a MarshalJSON or
// MarshalText method, the ",string" and ",omitzero" options, []byte
// (base64), arrays, float32, maps with keys other than strings, and
// anonymous struct types.
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

// Generate returns the gofmt'ed source of an encoder for the struct type
// typeName of the Go package in dir, to be saved in that package as the
// file named output (which is left out when the package is read).
func Generate(dir, typeName, output string) ([]byte, error) {
	pkg, typeErrs, err := load(dir, output)
	if err != nil {
		return nil, err
	}
	obj, ok := pkg.Scope().Lookup(typeName).(*types.TypeName)
	if !ok {
		return nil, fmt.Errorf("jsongen: package %s in %s has no type %s", pkg.Name(), dir, typeName)
	}
	root, ok := obj.Type().(*types.Named)
	if !ok || !isStruct(root) {
		return nil, fmt.Errorf("jsongen: %s.%s is not a struct type", pkg.Name(), typeName)
	}
	g := &gen{pkg: pkg, typeErrs: errors.Join(typeErrs...), imports: map[string]string{}, names: map[string]*types.Named{},
		funcs: map[*types.Named]string{}, recv: lowerFirst(typeName) + "Encoder"}
	if _, err := g.funcFor(root); err != nil {
		return nil, err
	}
	for i := 0; i < len(g.queue); i++ {
		if err := g.structFunc(g.queue[i]); err != nil {
			return nil, err
		}
	}
	src, err := g.file(root)
	if err != nil {
		return nil, err
	}
	out, err := format.Source(src)
	if err != nil {
		return nil, fmt.Errorf("jsongen: the generated source does not parse (a bug in jsongen): %w\n%s", err, src)
	}
	return out, nil
}

// load type-checks the package in dir without the file skip, returning
// the type errors apart.
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
	// Type errors are collected, not fatal: the package's code may call
	// the very methods the generated file defines, left out here. Only a
	// type the encoder needs that did not type-check stops the generation
	// (gen.value meets it as an invalid type and reports these errors).
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

// exportFiles builds the packages named by paths (go list -export) and
// returns where the compiler left each one's export data. Export data
// holds what a package's own exports need of its dependencies, so the
// direct imports are enough.
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

// gen is one generation: the struct types reached, their append methods'
// names, and the imports the file needs.
type gen struct {
	pkg      *types.Package
	typeErrs error                   // the package's type errors, without the generated file
	recv     string                  // the encoder type's name
	imports  map[string]string       // path -> package name
	names    map[string]*types.Named // method name -> its type
	funcs    map[*types.Named]string // type -> its method's name
	queue    []*types.Named          // in the order first reached
	usesErr  bool                    // a float is encoded: the encoder can fail
	methods  bytes.Buffer
}

// funcFor names the append method of struct type n, queueing it to be
// written the first time.
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

// field is one struct field as encoding/json sees it.
type field struct {
	goName    string
	jsonName  string
	typ       types.Type
	omitEmpty bool
}

// fields reads st's fields as encoding/json would, refusing what the
// generated code would encode otherwise.
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
			continue // encoding/json leaves unexported fields out
		}
		tag := reflect.StructTag(st.Tag(i)).Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = v.Name()
		}
		if !plainName(name) {
			return nil, fmt.Errorf("jsongen: %s has JSON name %q: jsongen takes only ASCII letters, digits, _, - and . (which need no escape)", where, name)
		}
		f := field{goName: v.Name(), jsonName: name, typ: v.Type()}
		if opts != "" {
			for o := range strings.SplitSeq(opts, ",") {
				switch o {
				case "omitempty":
					f.omitEmpty = true
				default:
					return nil, fmt.Errorf("jsongen: %s has the tag option %q, which jsongen does not support", where, o)
				}
			}
		}
		if prev, dup := seen[name]; dup {
			return nil, fmt.Errorf("jsongen: fields %s and %s of %s have one JSON name %q (encoding/json would drop both)", prev, v.Name(), owner, name)
		}
		seen[name] = v.Name()
		out = append(out, f)
	}
	return out, nil
}

// structFunc writes the append method of struct type n.
func (g *gen) structFunc(n *types.Named) error {
	owner := n.Obj().Pkg().Name() + "." + n.Obj().Name()
	if err := refuseMarshaler(owner, n); err != nil {
		return err
	}
	fields, err := g.fields(owner, n.Underlying().(*types.Struct))
	if err != nil {
		return err
	}
	w := &writer{}
	// state before each field: whether something was written for sure
	// (a comma goes first), nothing for sure (none), or maybe (only an
	// omitempty field came before: the method tracks it in more).
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
		// Under omitempty a pointer, slice or map written is not nil.
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

	fmt.Fprintf(&g.methods, "\n// %s appends v as JSON.\nfunc (e *%s) %s(b []byte, v *%s) []byte {\n", g.funcs[n], g.recv, g.funcs[n], g.typeName(n))
	if usesMore {
		g.methods.WriteString("more := false // a member was written\n")
	}
	g.methods.Write(w.b.Bytes())
	g.methods.WriteString("return b\n}\n")
	return nil
}

// nonEmpty is the condition under which an omitempty field is written:
// encoding/json leaves out false, 0, "", a nil pointer and an empty slice
// or map. A struct is never empty: the condition is "".
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

// value writes the statements that append x, of type t. addressable
// says whether &x is allowed, notNil that x is known not to be nil; depth
// numbers the loop variables; where names the value in messages and in
// the encoder's errors.
func (g *gen) value(w *writer, t types.Type, x string, addressable, notNil bool, depth int, where string) error {
	if err := refuseMarshaler(where, t); err != nil {
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
		w.nilOr(x, notNil)
		w.lit("[")
		w.open(fmt.Sprintf("for %s := range %s", i, x))
		w.open(i + " > 0")
		w.lit(",")
		w.close()
		if err := g.value(w, u.Elem(), x+"["+i+"]", true, false, depth+1, where+"[]"); err != nil {
			return err
		}
		w.close()
		w.lit("]")
		w.endNilOr(notNil)
		return nil
	case *types.Map:
		key, ok := u.Key().Underlying().(*types.Basic)
		if !ok || key.Kind() != types.String {
			return fmt.Errorf("jsongen: %s is a map with %s keys; jsongen takes only string keys", where, u.Key())
		}
		if err := refuseMarshaler(where+" key", u.Key()); err != nil {
			return err
		}
		j, k, mv := fmt.Sprintf("j%d", depth), fmt.Sprintf("k%d", depth), fmt.Sprintf("v%d", depth)
		jsonenc := g.use(jsonencPath, "jsonenc")
		w.nilOr(x, notNil)
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
		w.endNilOr(notNil)
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

// call appends the struct n that the pointer expression p points at.
func (g *gen) call(w *writer, n *types.Named, p, where string) error {
	name, err := g.funcFor(n)
	if err != nil {
		return fmt.Errorf("%w (at %s)", err, where)
	}
	w.stmt(fmt.Sprintf("b = e.%s(b, %s)", name, p))
	return nil
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
		g.usesErr = true
		w.stmt(fmt.Sprintf("b = e.float(b, %s, %s)", convert(x, t, types.Typ[types.Float64]), strconv.Quote(where)))
	default:
		return fmt.Errorf("jsongen: %s has type %s, which jsongen does not support", where, t)
	}
	return nil
}

// convert is x converted to want, when its type t is another.
func convert(x string, t, want types.Type) string {
	if types.Identical(t, want) {
		return x
	}
	return want.String() + "(" + x + ")"
}

// refuseMarshaler fails on a type whose methods encoding/json would call
// instead of encoding its value (on the type or its pointer).
func refuseMarshaler(where string, t types.Type) error {
	if _, ok := t.(*types.Named); !ok {
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

// isStruct reports whether n is a struct type.
func isStruct(n *types.Named) bool {
	_, ok := n.Underlying().(*types.Struct)
	return ok
}

// plainName reports whether a JSON member name needs no escape in any
// encoding: ASCII letters, digits, '_', '-' and '.'.
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

func lowerFirst(s string) string { return strings.ToLower(s[:1]) + s[1:] }
func upperFirst(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// file is the whole generated file.
func (g *gen) file(root *types.Named) ([]byte, error) {
	var b bytes.Buffer
	name := root.Obj().Name()
	fmt.Fprintf(&b, "// Code generated by jsongen from the type %s.%s; DO NOT EDIT.\n", g.pkg.Name(), name)
	fmt.Fprintf(&b, "// Edit the types (their struct tags) and run go generate (make generate).\n\npackage %s\n\n", g.pkg.Name())
	if g.usesErr {
		g.use("fmt", "fmt")
	}
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
	b.WriteString(")\n\n")

	fmt.Fprintf(&b, `// AppendJSON appends r encoded as JSON, byte for byte what encoding/json's
// Marshal writes for it, without its reflection. A nil r is null.
`)
	if g.usesErr {
		fmt.Fprintf(&b, `// Like Marshal, it fails on a float that is NaN or infinite, which JSON
// cannot hold; it then returns dst as it was, and the error names the field.
`)
	}
	fmt.Fprintf(&b, `func (r *%[1]s) AppendJSON(dst []byte) ([]byte, error) {
	if r == nil {
		return append(dst, "null"...), nil
	}
	var e %[2]s
	b := e.%[3]s(dst, r)
`, name, g.recv, g.funcs[root])
	if g.usesErr {
		b.WriteString("if e.err != nil {\nreturn dst, e.err\n}\n")
	}
	b.WriteString("return b, nil\n}\n\n")
	if g.usesErr {
		fmt.Fprintf(&b, `// %[1]s holds the first error of an encoding, so that the append
// methods need not check one after each value.
type %[1]s struct{ err error }

// float appends f, or notes the first NaN or infinity (where names it).
func (e *%[1]s) float(b []byte, f float64, where string) []byte {
	out, err := jsonenc.AppendFloat(b, f)
	if err != nil && e.err == nil {
		e.err = fmt.Errorf("%%s is %%v: %%w", where, f, err)
	}
	return out
}
`, g.recv)
	} else {
		fmt.Fprintf(&b, "// %[1]s is the receiver of the append methods.\ntype %[1]s struct{}\n", g.recv)
	}
	b.Write(g.methods.Bytes())
	return b.Bytes(), nil
}

// writer collects the statements of one method, joining adjacent literal
// bytes into one append.
type writer struct {
	b       bytes.Buffer
	pending strings.Builder
}

// lit appends the literal JSON text s.
func (w *writer) lit(s string) { w.pending.WriteString(s) }

// flush writes the pending literal text as one append.
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

// open starts a block: "if cond", "for ...", or a bare condition
// (written as an if).
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

// nilOr writes null for a nil x and opens the block for the other case,
// unless x is known not to be nil.
func (w *writer) nilOr(x string, notNil bool) {
	if notNil {
		return
	}
	w.open("if " + x + " == nil")
	w.lit("null")
	w.els()
}

// endNilOr closes nilOr's block.
func (w *writer) endNilOr(notNil bool) {
	if !notNil {
		w.close()
	}
}

func (w *writer) close() {
	w.flush()
	w.b.WriteString("}\n")
}
