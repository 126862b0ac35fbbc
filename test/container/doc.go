// Package container proves gpu-preflight as the ENTRYPOINT of real OCI
// containers: each scenario builds a bundle (a root filesystem stacked with
// overlayfs over cached debootstrap or busybox roots, a config.json written
// here, the driver files injected the way the NVIDIA Container Toolkit does)
// and runs it with Debian's runc.
//
// The tests carry the build tag "container" and need root, runc and
// debootstrap; `make test-container` runs them (README, "Testing"). Without
// the tag this package is empty, so `go test ./...` stays unprivileged.
package container
