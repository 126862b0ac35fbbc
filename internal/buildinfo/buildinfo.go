// Package buildinfo holds what the Makefile stamps in with -ldflags -X.
package buildinfo

var (
	Version = "dev"
	Commit  = "unknown"
)
