// Command noop execs its arguments and does nothing else: the floor for any
// wrapper written in Go, measured next to gpu-preflight by bench/startup.
package main

import (
	"os"
	"syscall"
)

func main() {
	if len(os.Args) < 2 {
		os.Exit(64)
	}
	err := syscall.Exec(os.Args[1], os.Args[1:], os.Environ())
	os.Stderr.WriteString("noop: " + err.Error() + "\n")
	os.Exit(127)
}
