package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// asUser runs the shim with args as a user who is not root: this user when
// the tests do not run as root, else nobody (65534), with HOME home (which
// that user owns, unless it is /) and env. The shim is copied where that
// user can run it (t.TempDir's parent is 0700: userDir makes the
// directories that user is given).
func asUser(t *testing.T, home string, env []string, args ...string) (stdout, stderr string, uid int) {
	t.Helper()
	uid, gid := os.Getuid(), os.Getgid()
	if uid == 0 {
		uid, gid = 65534, 65534
	}
	dir, err := os.MkdirTemp("", "gpu-preflight-user")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "gpu-preflight")
	data, err := os.ReadFile(shimPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if home != "/" && os.Getuid() == 0 {
		if err := os.Chown(home, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + home, "PREFLIGHT_LOG_FORMAT=json"}, env...)
	if os.Getuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v as uid %d: %v\n%s", args, uid, err, errb.String())
	}
	return out.String(), errb.String(), uid
}

// A user who is not root, on a machine where /var/log/gpu-preflight is not
// theirs, gets their records in ~/.local/state/gpu-preflight (or
// $XDG_STATE_HOME/gpu-preflight) with no warning; a HOME that is not theirs
// (a container run as --user 1000, where HOME is /) keeps the default, and
// the warning says it could not be written.
func TestNonRootRecordsGoToTheUsersStateDirectory(t *testing.T) {
	if unix := "/var/log/gpu-preflight"; os.Getuid() != 0 {
		if f, err := os.CreateTemp(unix, ".probe-"); err == nil {
			f.Close()
			os.Remove(f.Name())
			t.Fatalf("%s is writable by this user: the test needs a default directory that is not", unix)
		}
	}
	root := driverRootIn(t, userDir(t), "550.54.15")
	env := []string{"PREFLIGHT_ROOT=" + root, "PREFLIGHT_HOST_ROOT=" + root}

	home := userDir(t)
	_, stderr, uid := asUser(t, home, env, "--", "true")
	files, _ := filepath.Glob(filepath.Join(home, ".local/state/gpu-preflight/*.json"))
	if len(files) != 1 || strings.Contains(stderr, "not written") {
		t.Errorf("uid %d: %d records in ~/.local/state/gpu-preflight, want 1; stderr:\n%s", uid, len(files), stderr)
	}

	home, state := userDir(t), userDir(t)
	if os.Getuid() == 0 {
		if err := os.Chown(state, uid, uid); err != nil {
			t.Fatal(err)
		}
	}
	asUser(t, home, append(env, "XDG_STATE_HOME="+state), "check")
	if files, _ := filepath.Glob(filepath.Join(state, "gpu-preflight/*.json")); len(files) != 1 {
		t.Errorf("XDG_STATE_HOME: %d records in %s/gpu-preflight, want 1", len(files), state)
	}

	_, stderr, _ = asUser(t, "/", env, "--", "true")
	if !strings.Contains(stderr, "provenance record not written") || !strings.Contains(stderr, "/var/log/gpu-preflight") {
		t.Errorf("HOME=/: no warning that /var/log/gpu-preflight could not be written:\n%s", stderr)
	}
}

// userDir is an empty directory that another user can be given.
func userDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "gpu-preflight-home")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
