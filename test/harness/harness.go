// Package harness is what every test suite needs around the code it tests:
// the repository and the download cache, a command run with a deadline, and
// the JSON a command printed. Both Go modules' suites import it.
package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// RootDir is the repository root: two levels above this package's source.
func RootDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("cannot locate test/harness's source, and so the repository")
	}
	dir := filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	if _, err := os.Stat(filepath.Join(dir, "Makefile")); err != nil {
		return "", fmt.Errorf("%s is not the repository root (no Makefile): %w", dir, err)
	}
	return dir, nil
}

// Root is RootDir for a test: a failure ends the test.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := RootDir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// CacheDir is where downloads are cached, outside the clone:
// scripts/cache-dir.sh's answer, so a fresh clone downloads nothing again.
func CacheDir() (string, error) {
	root, err := RootDir()
	if err != nil {
		return "", err
	}
	out, err := exec.Command("bash", filepath.Join(root, "scripts", "cache-dir.sh")).Output()
	if err != nil {
		return "", fmt.Errorf("scripts/cache-dir.sh: %w", err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", errors.New("scripts/cache-dir.sh printed no folder")
	}
	return dir, nil
}

// Cache is CacheDir for a test: a failure ends the test.
func Cache(t testing.TB) string {
	t.Helper()
	dir, err := CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Result is how a command ended.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// Run runs name with env (nil: this process's) in dir and returns how it
// ended. One still running after limit is killed and fails the test, as
// does one that cannot start; a non-zero exit is the caller's to judge.
func Run(t testing.TB, limit time.Duration, dir string, env []string, name string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("%s %s: still running after %v\nstderr:\n%s", name, strings.Join(args, " "), limit, r.Stderr)
	case errors.As(err, &ee):
		r.Code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// Field walks decoded JSON down the object keys of path,
// Field(rec, "decision", "action"); nil where a key or an object is missing.
func Field(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// WaitForFile polls for path and fails t when it has not appeared within a
// minute (a hang, however loaded the machine), with the stderr of the
// process that was to make it.
func WaitForFile(t testing.TB, path string, stderr func() string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s did not appear within a minute; stderr:\n%s", path, stderr())
}

// NeedRoot stops a test that needs root: under CI it fails, elsewhere it is
// skipped with the reason.
func NeedRoot(t *testing.T, why string) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatal("this test needs root: " + why)
	}
	t.Skip("needs root: " + why)
}
