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

// TraceV2 is trace.v2.schema.json, `gpu-preflight trace --json`'s version "2".
//
//go:embed trace.v2.schema.json
var TraceV2 []byte

// TraceV2ID is its $id.
const TraceV2ID = "https://github.com/gpu-preflight/gpu-preflight/docs/schema/trace.v2.schema.json"
