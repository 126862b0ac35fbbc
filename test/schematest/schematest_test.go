package schematest

import (
	"encoding/json"
	"os/exec"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/docs/schema"
	"github.com/gpu-preflight/gpu-preflight/preflight/decision"
	"github.com/gpu-preflight/gpu-preflight/report"
)

// Issue 6 item 1: every field of the schema is described.
func TestSchemaDescribesEveryField(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(schema.ProvenanceV1, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, node map[string]any)
	count := 0
	walk = func(path string, node map[string]any) {
		if props, ok := node["properties"].(map[string]any); ok {
			for name, p := range props {
				pm := p.(map[string]any)
				count++
				if d, _ := pm["description"].(string); strings.TrimSpace(d) == "" {
					t.Errorf("%s.%s has no description", path, name)
				}
				walk(path+"."+name, pm)
			}
		}
		for _, key := range []string{"items", "additionalProperties"} {
			if sub, ok := node[key].(map[string]any); ok {
				walk(path+"[]", sub)
			}
		}
		for _, key := range []string{"oneOf", "anyOf"} {
			if subs, ok := node[key].([]any); ok {
				for _, s := range subs {
					walk(path, s.(map[string]any))
				}
			}
		}
		if defs, ok := node["$defs"].(map[string]any); ok {
			for name, d := range defs {
				walk("$defs."+name, d.(map[string]any))
			}
		}
	}
	walk("$", doc)
	if count < 100 {
		t.Errorf("walked only %d fields; the walk is broken", count)
	}
}

// The Go type and the schema must not drift: every JSON key a Record can
// produce is in the schema (additionalProperties is false everywhere), and
// every required key is produced (an empty record validates).
func TestGoTypeMatchesSchema(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(schema.ProvenanceV1, &doc); err != nil {
		t.Fatal(err)
	}
	props := doc["properties"].(map[string]any)
	var keys []string
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var goKeys []string
	rt := reflect.TypeOf(report.Record{})
	for i := 0; i < rt.NumField(); i++ {
		tag, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		goKeys = append(goKeys, tag)
	}
	sort.Strings(goKeys)
	if !reflect.DeepEqual(keys, goKeys) {
		t.Errorf("schema top-level keys %v != Record's %v", keys, goKeys)
	}
	r := report.New(report.Inputs{Now: time.Now(), Decision: decision.Decision{Policy: "warn", Action: decision.Exec}})
	b, _ := json.Marshal(r)
	Validate(t, b)
}

func TestCheckRejectsBrokenRecords(t *testing.T) {
	r := report.New(report.Inputs{Now: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), Decision: decision.Decision{Policy: "fail", Action: "exec"}})
	good, _ := json.Marshal(r)
	if err := Check(good); err != nil {
		t.Fatalf("a fresh record fails: %v", err)
	}
	mutate := func(f func(m map[string]any)) []byte {
		var m map[string]any
		json.Unmarshal(good, &m)
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	tests := []struct {
		name   string
		record []byte
		want   string
	}{
		{"not JSON", []byte("{"), "not JSON"},
		{"missing field", mutate(func(m map[string]any) { delete(m, "host") }), "host"},
		{"unknown field", mutate(func(m map[string]any) { m["extra"] = 1 }), "extra"},
		{"wrong schema version", mutate(func(m map[string]any) { m["schemaVersion"] = "2" }), "schemaVersion"},
		{"bad action", mutate(func(m map[string]any) { m["decision"].(map[string]any)["action"] = "run" }), "action"},
		{"bad run id", mutate(func(m map[string]any) { m["runId"] = "XYZ" }), "runId"},
		{"time without nanoseconds", mutate(func(m map[string]any) { m["startedAt"] = "2026-01-02T03:04:05Z" }), "startedAt"},
		{"null array", mutate(func(m map[string]any) { m["checks"] = nil }), "checks"},
		{"bad check status", mutate(func(m map[string]any) {
			m["checks"] = []any{map[string]any{"id": "x", "status": "ok", "message": "", "remedy": ""}}
		}), "status"},
	}
	for _, tt := range tests {
		err := Check(tt.record)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error = %v, want one mentioning %q", tt.name, err, tt.want)
		}
	}
}

// The validator is for tests only: it must never be linked into the shim.
func TestValidatorStaysOutOfTheShim(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the shim's imports: %v", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", "github.com/gpu-preflight/gpu-preflight/cmd/gpu-preflight").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	pkgs := strings.Fields(string(out))
	if !slices.Contains(pkgs, "github.com/gpu-preflight/gpu-preflight/report") {
		t.Fatalf("go list did not list the shim's packages:\n%s", out)
	}
	for _, pkg := range pkgs {
		if strings.HasPrefix(pkg, "github.com/santhosh-tekuri/") || strings.HasSuffix(pkg, "/test/schematest") {
			t.Errorf("gpu-preflight links %s; keep the schema validator in tests", pkg)
		}
	}
}
