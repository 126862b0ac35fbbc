// Command jsongen writes the encoders of internal/jsonenc/jsongen for
// struct types of the package in the current directory:
//
//	//go:generate go run ../internal/cmd/jsongen -type Record -o record_json.go
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/internal/jsonenc/jsongen"
)

func main() {
	typeNames := flag.String("type", "", "the struct types, comma-separated")
	output := flag.String("o", "", "the file to write, in the current directory")
	flag.Parse()
	if *typeNames == "" || *output == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: jsongen -type TYPE[,TYPE...] -o FILE.go (in the package's directory)")
		os.Exit(2)
	}
	src, err := jsongen.Generate(".", *output, strings.Split(*typeNames, ",")...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(*output, src, 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "jsongen: %v\n", err)
		os.Exit(1)
	}
}
