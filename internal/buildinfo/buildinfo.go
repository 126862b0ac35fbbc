// Package buildinfo holds the version stamped in at link time by the Makefile.
package buildinfo

// Set with -ldflags "-X .../buildinfo.Version=... -X .../buildinfo.Commit=...".
var (
	Version = "dev"
	Commit  = "unknown"
)
