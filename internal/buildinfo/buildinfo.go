// Package buildinfo holds the version and commit the Makefile stamps in
// with -ldflags "-X .../internal/buildinfo.Version=...".
package buildinfo

var (
	Version = "dev"
	Commit  = "unknown"
)
