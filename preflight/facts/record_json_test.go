package facts

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/internal/jsonenc/jsongen"
)

func TestRecordJSONIsUpToDate(t *testing.T) {
	src, err := os.ReadFile("facts.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^//go:generate .* -type (\S+) -o record_json.go$`).FindSubmatch(src)
	if m == nil {
		t.Fatal("facts.go has no go:generate line for record_json.go")
	}
	want, err := jsongen.Generate(".", "record_json.go", strings.Split(string(m[1]), ",")...)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("record_json.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("record_json.go is not what jsongen writes for the types the record holds: run go generate ./preflight/facts (make generate)")
	}
}
