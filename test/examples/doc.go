// Package examples keeps the repository's examples and README true: each
// file is parsed, checked against what the Makefile builds and gpu-preflight
// reads and writes, and run where it can be. It is its own module, so the
// Kubernetes API types stay out of the shim's module graph. Each format is
// read by its real parser where one runs here (Kubernetes types, goldmark,
// Grafana's LogQL grammar, podman); Fluent Bit has no package or Go module,
// so fluentbit.go reads its structure. Every file under examples/ must be
// read by a test (coverage_test.go).
//
//	make test-examples   the default suite
//	make test-podman     the Dockerfiles built and run by a real engine (root)
package examples
