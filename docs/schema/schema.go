// Package schema holds the JSON Schemas of gpu-preflight's outputs, embedded
// so tests can validate against the files in the repository without knowing
// where the checkout is. The .json files are the documentation; this package
// only carries them.
package schema

import _ "embed"

// ProvenanceV1 is provenance.v1.schema.json: the provenance record, schema
// version "1" (report.SchemaVersion).
//
//go:embed provenance.v1.schema.json
var ProvenanceV1 []byte

// ProvenanceV1ID is the schema's $id.
const ProvenanceV1ID = "https://github.com/gpu-preflight/gpu-preflight/docs/schema/provenance.v1.schema.json"

// TraceV2 is trace.v2.schema.json: the output of `gpu-preflight trace
// --json` (trace.SchemaVersion "1").
//
//go:embed trace.v2.schema.json
var TraceV2 []byte

// TraceV2ID is its $id.
const TraceV2ID = "https://github.com/gpu-preflight/gpu-preflight/docs/schema/trace.v2.schema.json"
