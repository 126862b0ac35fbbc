package main

import (
	"flag"
	"io"
)

// parseOperands parses args into fs, flags before or after the operands
// (`diff a.json b.json --json`), and returns the operands; everything after
// -- is an operand.
func parseOperands(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, error) {
	var operands []string
	for {
		if err := parseFlags(fs, args, stdout); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return operands, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(operands, rest...), nil
		}
		operands = append(operands, rest[0])
		args = rest[1:]
	}
}
