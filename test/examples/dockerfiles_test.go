package examples

import (
	"regexp"
	"strconv"
	"testing"
)

// The Dockerfiles are built and run by a real engine in the podman suite
// (podman_test.go). This is what that suite cannot see: its golang
// stand-in carries this machine's Go, whatever GO_IMAGE names.

// TestDockerfileGoImageIsNewEnough: GO_IMAGE's Go is at least go.mod's
// `go` line, or `make build` in the image refuses the module
// (GOTOOLCHAIN=local).
func TestDockerfileGoImageIsNewEnough(t *testing.T) {
	img := regexp.MustCompile(`(?m)^ARG GO_IMAGE=golang:(\d+)\.(\d+)`).FindStringSubmatch(readRepoFile(t, "Dockerfile.example"))
	mod := regexp.MustCompile(`(?m)^go (\d+)\.(\d+)`).FindStringSubmatch(readRepoFile(t, "go.mod"))
	if img == nil || mod == nil {
		t.Fatalf("GO_IMAGE %v, go.mod go line %v: not found", img, mod)
	}
	num := func(s string) int { n, _ := strconv.Atoi(s); return n }
	if num(img[1]) < num(mod[1]) || num(img[1]) == num(mod[1]) && num(img[2]) < num(mod[2]) {
		t.Errorf("GO_IMAGE golang:%s.%s is older than go.mod's go %s.%s", img[1], img[2], mod[1], mod[2])
	}
}
