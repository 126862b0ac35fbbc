// Package schema embeds the JSON Schemas of gpu-preflight's outputs, so
// tests validate against the repository's files wherever the checkout is.
package schema

import _ "embed"

// ProvenanceV1 is provenance.v1.schema.json, the record's schema version "1".
//
//go:embed provenance.v1.schema.json
var ProvenanceV1 []byte

// ProvenanceV1ID is the schema's $id.
const ProvenanceV1ID = "https://github.com/gpu-preflight/gpu-preflight/docs/schema/provenance.v1.schema.json"

// TraceV1 is trace.v1.schema.json, `gpu-preflight trace --json`'s version "1".
//
//go:embed trace.v1.schema.json
var TraceV1 []byte

// TraceV1ID is its $id.
const TraceV1ID = "https://github.com/gpu-preflight/gpu-preflight/docs/schema/trace.v1.schema.json"
