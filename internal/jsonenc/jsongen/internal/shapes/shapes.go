// Package shapes holds types with every shape jsongen encodes, in the
// places where it could go wrong (an omitempty field first, named basic
// types, pointers to pointers, maps of slices, an empty struct, a type
// that holds itself), so that its tests hold the generated encoder to
// encoding/json on more than report.Record uses.
package shapes

//go:generate go run ../../../../cmd/jsongen -type Root -o root_json.go

// Named basic and composite types: the encoder converts them.
type (
	Level string
	Flag  bool
	Count int32
	Size  uint16
	Ratio float64
	Names []string
	Table map[Level]*Leaf
)

// Root is the type the encoder is generated for.
type Root struct {
	// Omitted or not, the first two decide at run time whether a comma
	// goes before the third.
	First  string `json:"first,omitempty"`
	Second int8   `json:"second,omitempty"`
	Third  bool   `json:"third"`
	NoTag  string
	Hidden string `json:"-"`
	//lint:ignore U1000 encoding/json leaves an unexported field out, and so must the encoder
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
	Leaves     []Leaf                 `json:"leaves,omitempty"`
	Names      Names                  `json:"names"`
	Table      Table                  `json:"table"`
	Nested     []map[string][]float64 `json:"nested"`
	Empty      Empty                  `json:"empty,omitempty"`
	Self       *Root                  `json:"self"`
	Last       Flag                   `json:"last,omitempty"`
}

// Leaf is all omitempty: "{}" when every field is empty.
type Leaf struct {
	A string            `json:"a,omitempty"`
	B []int             `json:"b,omitempty"`
	C map[string]string `json:"c,omitempty"`
	D *Size             `json:"d,omitempty"`
}

// Empty has no fields: "{}".
type Empty struct{}
