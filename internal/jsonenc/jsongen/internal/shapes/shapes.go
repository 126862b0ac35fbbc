// Package shapes holds every shape jsongen writes where it could go wrong
// (omitempty kept or ignored, fields left out or renamed, named types, nil
// and empty, a type that holds itself), for its tests to hold the
// generated code to jsonenctest.Marshal.
package shapes

//go:generate go run ../../../../cmd/jsongen -type Root,Other -o root_json.go

type (
	Level string
	Flag  bool
	Count int32
	Size  uint16
	Ratio float64
	Names []string
	Table map[Level]*Leaf
)

type Root struct {
	// Written or not, the first two decide whether a comma goes before the third.
	First   string `json:"first,omitempty" record:",omitempty"`
	Second  int8   `json:"second,omitempty" record:",omitempty"`
	Third   bool   `json:"third"`
	NoTag   string
	Hidden  string `json:"-"`
	Shown   string `json:"-" record:"shown"`
	Skipped string `json:"skipped" record:"-"`
	Renamed int    `json:"renamed,omitempty" record:"recordName"`
	//lint:ignore U1000 an unexported field is left out, and so must the encoder
	unexported string
	Level      Level                  `json:"level"`
	Flag       Flag                   `json:"flag,omitempty"`
	Count      Count                  `json:"count"`
	Size       Size                   `json:"size"`
	Ratio      Ratio                  `json:"ratio,omitempty"`
	U          uint                   `json:"u"`
	UP         uintptr                `json:"up"`
	I64        int64                  `json:"i64"`
	Ptr        **int64                `json:"ptr"`
	Leaf       *Leaf                  `json:"leaf,omitempty"`
	Leaves     []Leaf                 `json:"leaves,omitempty" record:",omitempty"`
	Names      Names                  `json:"names"`
	Table      Table                  `json:"table"`
	Nested     []map[string][]float64 `json:"nested"`
	Empty      Empty                  `json:"empty,omitempty"`
	Self       *Root                  `json:"self"`
	Last       Flag                   `json:"last,omitempty" record:",omitempty"`
}

type Leaf struct {
	A string            `json:"a,omitempty"`
	B []int             `json:"b,omitempty"`
	C map[string]string `json:"c,omitempty"`
	D *Size             `json:"d,omitempty"`
}

type Empty struct{}

type Other struct {
	Only Flag `json:"only,omitempty" record:",omitempty"`
}
