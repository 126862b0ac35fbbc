// Package container proves gpu-preflight as the ENTRYPOINT of real OCI
// containers run by Debian's runc, with the driver files injected as the
// NVIDIA Container Toolkit does. The tests carry the build tag "container"
// and need root (`make test-container`); without it the package is empty.
package container
