// Package schematest validates provenance records against docs/schema for
// any suite that writes them, with github.com/santhosh-tekuri/jsonschema/v6,
// a complete draft 2020-12 validator (a home-made subset could silently
// ignore a keyword). Only tests may import it: keep the validator out of the
// shim.
package schematest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/gpu-preflight/gpu-preflight/docs/schema"
)

var (
	once     sync.Once
	compiled *jsonschema.Schema
	errLoad  error
)

func provenance() (*jsonschema.Schema, error) {
	once.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema.ProvenanceV1))
		if err != nil {
			errLoad = fmt.Errorf("parse docs/schema/provenance.v1.schema.json: %w", err)
			return
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource(schema.ProvenanceV1ID, doc); err != nil {
			errLoad = fmt.Errorf("load docs/schema/provenance.v1.schema.json: %w", err)
			return
		}
		compiled, errLoad = c.Compile(schema.ProvenanceV1ID)
		if errLoad != nil {
			errLoad = fmt.Errorf("compile docs/schema/provenance.v1.schema.json: %w", errLoad)
		}
	})
	return compiled, errLoad
}

// Check validates one provenance record (a record file, a ledger line, the
// provenance log line's "record") and returns every violation, or nil.
func Check(record []byte) error {
	sch, err := provenance()
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(record))
	if err != nil {
		return fmt.Errorf("provenance record is not JSON: %w", err)
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("provenance record does not match docs/schema/provenance.v1.schema.json: %w", err)
	}
	return nil
}

// Validate fails t when record does not match the schema.
func Validate(t testing.TB, record []byte) {
	t.Helper()
	if err := Check(record); err != nil {
		t.Fatalf("%v\nrecord: %s", err, record)
	}
}

// ValidateOnlyRecord fails t unless dir holds exactly one record file
// (*.json) that matches the schema, and returns it.
func ValidateOnlyRecord(t testing.TB, dir string) []byte {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("%d record files in %s, want 1: %v", len(files), dir, files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	Validate(t, data)
	return data
}

var (
	traceOnce     sync.Once
	traceCompiled *jsonschema.Schema
	traceErr      error
)

// CheckTrace validates `gpu-preflight trace --json` against docs/schema/trace.v2.schema.json.
func CheckTrace(out []byte) error {
	traceOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema.TraceV2))
		if err != nil {
			traceErr = fmt.Errorf("parse docs/schema/trace.v2.schema.json: %w", err)
			return
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource(schema.TraceV2ID, doc); err != nil {
			traceErr = fmt.Errorf("load docs/schema/trace.v2.schema.json: %w", err)
			return
		}
		traceCompiled, traceErr = c.Compile(schema.TraceV2ID)
	})
	if traceErr != nil {
		return traceErr
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		return fmt.Errorf("trace output is not JSON: %w", err)
	}
	if err := traceCompiled.Validate(inst); err != nil {
		return fmt.Errorf("trace output does not match docs/schema/trace.v2.schema.json: %w", err)
	}
	return nil
}
