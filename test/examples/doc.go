// Package examples keeps the repository's examples true: Dockerfile.example,
// examples/ (Dockerfiles, Kubernetes manifests, Slurm scripts, log pipeline
// configuration) and the README are parsed, checked against what the
// Makefile builds and what gpu-preflight reads and writes, and, where they
// can be, run.
//
// It is its own Go module (test/examples/go.mod), so that the Kubernetes API
// types its tests decode manifests into never enter the shim's module graph.
// The parsers here are small and only as complete as the examples need; each
// has a fuzz target.
//
//	make test-examples            the default suite (no root needed except for `make run`)
//	make test-examples-container  the example image built as a root filesystem and run by runc (root)
package examples
