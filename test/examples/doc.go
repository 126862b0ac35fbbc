// Package examples keeps the repository's examples true: Dockerfile.example,
// examples/ (Dockerfiles, Kubernetes manifests, Slurm scripts, log pipeline
// configuration) and the README are parsed, checked against what the
// Makefile builds and what gpu-preflight reads and writes, and, where they
// can be, run.
//
// It is its own Go module (test/examples/go.mod), so that the Kubernetes API
// types its tests decode manifests into never enter the shim's module graph.
//
// Each format is read by its real parser where one can run here: the
// manifests by the Kubernetes API types, Markdown by goldmark (CommonMark),
// the LogQL queries by Grafana's own grammar (logql.go, run with Node.js),
// the Dockerfiles by podman and buildah (podman_test.go). Fluent Bit has
// neither a Debian package (bookworm or sid) nor a Go module for its
// configuration on the module proxy, so fluentbit.go reads the classic
// format's structure itself, as its documentation describes it, with a
// fuzz target. Every file under examples/ must be read by a test of the
// run (coverage_test.go).
//
//	make test-examples   the default suite
//	make test-podman     the Dockerfiles built and run by a real engine (root)
package examples
