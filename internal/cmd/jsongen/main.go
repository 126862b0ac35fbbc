// Command jsongen writes a JSON encoder for a struct type of the package in
// the current directory, without reflection at run time (package
// internal/jsonenc/jsongen says what it writes and what it refuses). It is
// run by go generate:
//
//	//go:generate go run ../internal/cmd/jsongen -type Record -o record_json.go
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/gpu-preflight/gpu-preflight/internal/jsonenc/jsongen"
)

func main() {
	typeName := flag.String("type", "", "the struct type to encode")
	output := flag.String("o", "", "the file to write, in the current directory")
	flag.Parse()
	if *typeName == "" || *output == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: jsongen -type TYPE -o FILE.go (in the package's directory)")
		os.Exit(2)
	}
	src, err := jsongen.Generate(".", *typeName, *output)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(*output, src, 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "jsongen: %v\n", err)
		os.Exit(1)
	}
}
