//go:build container

package container

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// result is how one container ended.
type result struct {
	exitCode int
	stdout   string
	stderr   string
	elapsed  time.Duration // from `runc run` to its exit: includes runc's own setup
	// sinceHook is from the createContainer hook (just before the shim
	// starts) to runc's exit; 0 when the bundle has no hook.
	sinceHook time.Duration
}

// running is a container whose `runc run` has started.
type running struct {
	t       *testing.T
	b       *bundle
	cmd     *exec.Cmd
	started time.Time
	done    chan error
	limit   time.Duration
}

// start runs `runc run` in the foreground (no daemon: runc stays the
// container's parent and exits with its status) with stdout and stderr
// captured to files, as a container runtime captures them. Whatever happens,
// cleanup kills and deletes the container, so a failing or hanging test never
// leaves one behind. limit bounds the whole run; wait fails the test past it.
func (b *bundle) start(t *testing.T, limit time.Duration) *running {
	t.Helper()
	stdout, err := os.Create(b.stdout)
	must(t, err)
	defer stdout.Close()
	stderr, err := os.Create(b.stderr)
	must(t, err)
	defer stderr.Close()
	cmd := exec.Command("runc", "run", "--bundle", b.dir, b.id)
	cmd.Stdin = nil // /dev/null
	cmd.Stdout, cmd.Stderr = stdout, stderr
	t.Cleanup(func() { b.delete(t) })
	r := &running{t: t, b: b, cmd: cmd, done: make(chan error, 1), limit: limit}
	r.started = time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting runc run: %v", err)
	}
	go func() { r.done <- cmd.Wait() }()
	return r
}

// run starts the container and waits for it.
func (b *bundle) run(t *testing.T, limit time.Duration) result {
	t.Helper()
	return b.start(t, limit).wait()
}

// wait waits for `runc run` to exit. Past the limit it kills the container
// and fails the test: a hung container is a failure, never a hung suite.
func (r *running) wait() result {
	r.t.Helper()
	remaining := r.limit - time.Since(r.started)
	timer := time.NewTimer(remaining)
	defer timer.Stop()
	var err error
	select {
	case err = <-r.done:
	case <-timer.C:
		r.b.kill(r.t, "KILL", true)
		select {
		case <-r.done:
		case <-time.After(5 * time.Second):
			_ = r.cmd.Process.Kill()
			<-r.done
		}
		res := r.b.collect(time.Since(r.started), -1)
		r.t.Fatalf("container %s still running after %v; killed it.\nstdout:\n%s\nstderr:\n%s",
			r.b.id, r.limit, res.stdout, res.stderr)
	}
	elapsed := time.Since(r.started)
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		r.t.Fatalf("waiting for runc run: %v", err)
	}
	return r.b.collect(elapsed, code)
}

func (b *bundle) collect(elapsed time.Duration, code int) result {
	out, _ := os.ReadFile(b.stdout)
	errOut, _ := os.ReadFile(b.stderr)
	res := result{exitCode: code, stdout: string(out), stderr: string(errOut), elapsed: elapsed}
	if stamp, err := os.ReadFile(filepath.Join(b.dir, hookStampFile)); err == nil {
		if ns, err := strconv.ParseInt(string(stamp), 10, 64); err == nil {
			res.sinceHook = time.Since(time.Unix(0, ns))
		}
	}
	return res
}

// kill sends sig with `runc kill` (to the container's init process, or with
// all to every process in it).
func (b *bundle) kill(t *testing.T, sig string, all bool) {
	t.Helper()
	args := []string{"kill"}
	if all {
		args = append(args, "--all")
	}
	args = append(args, b.id, sig)
	if out, err := runc(10*time.Second, args...); err != nil {
		t.Errorf("runc %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// delete removes the container whatever its state; a container that does
// not exist (it ended and runc run removed it) is not an error.
func (b *bundle) delete(t *testing.T) {
	out, err := runc(10*time.Second, "delete", "--force", b.id)
	if err != nil && !strings.Contains(out, "does not exist") {
		t.Errorf("runc delete --force %s: %v: %s", b.id, err, out)
	}
}

// pids lists the container's processes (host pids) with `runc ps`.
func (b *bundle) pids() ([]int, error) {
	out, err := runc(5*time.Second, "ps", "--format", "json", b.id)
	if err != nil {
		return nil, err
	}
	var pids []int
	if err := json.Unmarshal([]byte(out), &pids); err != nil {
		return nil, err
	}
	return pids, nil
}

// waitFor polls cond every 20 ms until it holds or limit passes.
func waitFor(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cond()
}

func runc(limit time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	out, err := exec.CommandContext(ctx, "runc", args...).CombinedOutput()
	return string(out), err
}
