package jsongen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// generateOne runs Generate on a package of one file holding src.
func generateOne(t *testing.T, src string) ([]byte, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte("package x\n\n"+src), 0o644); err != nil {
		t.Fatal(err)
	}
	return Generate(dir, "t_json.go", "T")
}

// TestRefusesWhatItWouldEncodeOtherwise: each type encoding/json encodes
// in a way the generator does not write fails, naming the field or type.
func TestRefusesWhatItWouldEncodeOtherwise(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"type T struct{ A any `json:\"a\"` }", "x.T.a has type any"},
		{"type T struct{ A interface{ M() } }", "T.A"},
		{"type E struct{ B int }\ntype T struct{ E }", "field E of x.T is embedded"},
		{"type E struct{ B int }\ntype T struct{ *E }", "embedded"},
		{"type T struct{ A int `json:\"a,string\"` }", `option "string"`},
		{"type T struct{ A int `json:\"a,omitzero\"` }", `option "omitzero"`},
		{"type T struct{ A []byte `json:\"a\"` }", "base64"},
		{"type T struct{ A [2]int `json:\"a\"` }", "[2]int"},
		{"type T struct{ A float32 `json:\"a\"` }", "float32"},
		{"type T struct{ A complex128 `json:\"a\"` }", "complex128"},
		{"type T struct{ A map[int]string `json:\"a\"` }", "map with int keys"},
		{"type T struct{ A struct{ B int } `json:\"a\"` }", "anonymous struct"},
		{"type T struct{ A chan int `json:\"a\"` }", "chan int"},
		{"type T struct{ A func() `json:\"a\"` }", "func()"},
		{"type T struct{ A, B int `json:\"a\"` }", `one JSON name "a"`},
		{"type T struct{ A int `json:\"a<b\"` }", `JSON name "a<b"`},
		{"type T struct{ A int `json:\"caf\u00e9\"` }", "ASCII"},
		{"type M struct{}\nfunc (M) MarshalJSON() ([]byte, error) { return nil, nil }\ntype T struct{ A M }", "MarshalJSON"},
		{"type M struct{}\nfunc (*M) MarshalJSON() ([]byte, error) { return nil, nil }\ntype T struct{ A []M }", "MarshalJSON"},
		{"type M string\nfunc (M) MarshalText() ([]byte, error) { return nil, nil }\ntype T struct{ A map[M]int }", "MarshalText"},
		{"type M int\nfunc (*M) MarshalText() ([]byte, error) { return nil, nil }\ntype T struct{ A *M }", "MarshalText"},
		{"type G[P any] struct{ A P }\ntype T struct{ A G[int] }", "generic"},
		{"type T int", "not a struct"},
		{"type T struct{ A Missing `json:\"a\"` }", "x.go:3:18: undefined: Missing"},
		{"type T struct{ A *[]struct{} `json:\"a\"` }", "anonymous struct"},
	} {
		_, err := generateOne(t, c.src)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Generate(%q) = %v, want an error saying %q", c.src, err, c.want)
		}
	}
}

// TestLeavesOutTheFileItWrites: a generated file that no longer compiles
// (its type lost a field) does not stop its regeneration, nor the
// package's own calls of the methods it defines.
func TestLeavesOutTheFileItWrites(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"x.go":      "package x\n\ntype T struct{ A string `json:\"a\"` }\n\nfunc (r *T) String() string { return string(r.AppendRecordJSON(nil, nil)) }\n",
		"t_json.go": "package x\n\nfunc (r *T) AppendRecordJSON(e any, dst []byte) []byte { return append(dst, r.Gone...) }\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src, err := Generate(dir, "t_json.go", "T")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), `{"a":`) || !strings.HasPrefix(string(src), "// Code generated ") {
		t.Errorf("Generate wrote:\n%s", src)
	}
}

func TestNoSuchType(t *testing.T) {
	if _, err := generateOne(t, "type U struct{}"); err == nil || !strings.Contains(err.Error(), "has no type T") {
		t.Errorf("Generate of a missing type: %v", err)
	}
}

// TestRecordTagsAreCheckedLikeJSONTags: a record tag takes the json tag's
// syntax and is refused where a json tag would be.
func TestRecordTagsAreCheckedLikeJSONTags(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"type T struct{ A int `json:\"a\" record:\",string\"` }", `option "string"`},
		{"type T struct{ A int `json:\"a\" record:\"a<b\"` }", `JSON name "a<b"`},
		{"type T struct{ A, B int `json:\"a\" record:\"b\"` }", `one JSON name "b"`},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte("package x\n\n"+c.src), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Generate(dir, "t_json.go", "T"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Generate(%q) = %v, want an error saying %q", c.src, err, c.want)
		}
	}
}

// TestARootMayMarshalItself: encoding/json may call a generated type's
// MarshalJSON, when it writes what AppendRecordJSON writes.
func TestARootMayMarshalItself(t *testing.T) {
	if _, err := generateOne(t, "type T struct{ A int }\nfunc (T) MarshalJSON() ([]byte, error) { return nil, nil }"); err != nil {
		t.Error(err)
	}
}
