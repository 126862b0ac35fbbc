// Package recordshapes holds every shape jsongen's record form writes, for
// its tests to hold the generated code to jsonenctest.Marshal.
package recordshapes

import "github.com/gpu-preflight/gpu-preflight/internal/jsonenc/jsongen/internal/shapes"

//go:generate go run ../../../../cmd/jsongen -record -type Fact,Other -o record_json.go

type Fact struct {
	First   string            `json:"first,omitempty"`
	Skipped string            `json:"skipped,omitempty" record:"-"`
	Kept    string            `json:"kept,omitempty" record:",omitempty"`
	Renamed int               `json:"renamed,omitempty" record:"recordName"`
	Ratio   float64           `json:"ratio,omitempty"`
	Ptr     *uint64           `json:"ptr,omitempty"`
	List    []string          `json:"list,omitempty"`
	Nested  [][]int           `json:"nested"`
	Map     map[string][]bool `json:"map,omitempty"`
	Inner   *Inner            `json:"inner,omitempty"`
	Inners  []Inner           `json:"inners,omitempty"`
	Leaf    shapes.Leaf       `json:"leaf"`
	ByName  map[string]*Inner `json:"byName"`
	Hidden  string            `json:"-" record:"hidden"`
	Last    bool              `json:"last,omitempty" record:",omitempty"`
}

type Inner struct {
	A string `json:"a,omitempty"`
	B []int  `json:"b,omitempty"`
}

type Other struct {
	Only bool `json:"only,omitempty" record:",omitempty"`
}
