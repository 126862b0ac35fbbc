//go:build e2e

package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/test/fakenvml"
	"github.com/gpu-preflight/gpu-preflight/test/procdriver"
)

// setEnv returns env with name set to value, replacing an earlier entry
// (getenv reads the first).
func setEnv(env []string, name, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return append(out, name+"="+value)
}

// wantNodeFaultTimeout checks a run cut by a deadline on a node whose
// driver 535.161.08 was seen: the node-fault exit code, the finding id
// with status error naming want, the driver in the record, and no "no
// NVIDIA driver" anywhere.
func wantNodeFaultTimeout(t *testing.T, rec record, r result, id string, want ...string) {
	t.Helper()
	if r.code != nodeFaultCode || !rec.Decision.NodeFault || rec.Decision.ExitCode != nodeFaultCode {
		t.Errorf("exit %d, decision %+v; want the node-fault code %d\nstderr: %s", r.code, rec.Decision, nodeFaultCode, r.stderr)
	}
	status, msg := finding(t, rec, id)
	t.Logf("exit %d after %v; %s: %s", r.code, r.elapsed.Round(time.Millisecond), id, msg)
	if status != "error" {
		t.Errorf("%s: status %q, want error", id, status)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("%s does not name %q: %s", id, w, msg)
		}
	}
	if rec.Host.Driver.Version != "535.161.08" || rec.Host.Driver.CUDAVersion != "12.2" {
		t.Errorf("the record lost the driver seen before the deadline: %+v", rec.Host.Driver)
	}
	for _, out := range []string{r.stdout, r.stderr} {
		if strings.Contains(out, "no NVIDIA driver") {
			t.Errorf(`"no NVIDIA driver" on a node whose driver was seen:\n%s`, out)
		}
	}
}

// Issue 24: a wedged driver on a node with driver 535. Whichever deadline
// fires first, the job ends with the node-fault code (75), which the
// shipped podFailurePolicy retries on another node, never with the
// mismatch code (78) that fails the Job; a finding says what had not
// finished, and the record keeps the driver /proc/driver/nvidia showed.
func TestTimeoutOnAWedgedDriverIsANodeFault(t *testing.T) {
	for _, tt := range []struct {
		name     string
		timeouts []string
		id       string
		want     []string
	}{
		{"PREFLIGHT_TIMEOUT below PREFLIGHT_NVML_TIMEOUT", []string{"PREFLIGHT_TIMEOUT=2s", "PREFLIGHT_NVML_TIMEOUT=10s"},
			"preflight", []string{"PREFLIGHT_TIMEOUT=2s", "the NVML probe (", "had not finished"}},
		{"PREFLIGHT_TIMEOUT above PREFLIGHT_NVML_TIMEOUT", []string{"PREFLIGHT_TIMEOUT=8s", "PREFLIGHT_NVML_TIMEOUT=2s"},
			"nvml", []string{"2s"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tag := marker(t)
			env := shimEnv(t, fakeLibrary(t), ptr(fakenvml.Hang()), append(tt.timeouts, tag)...)
			root := envValue(env, "PREFLIGHT_HOST_ROOT")
			d := procdriver.Driver{Version: "535.161.08", GPUs: []procdriver.GPU{procdriver.H100}}
			if err := d.Write(filepath.Join(root, "proc/driver")); err != nil {
				t.Fatal(err)
			}
			ref := reference(t)
			rec, c := checkJSON(t, env)
			wantNodeFaultTimeout(t, rec, c, tt.id, tt.want...)
			withinDeadline(t, "check", c.elapsed, 2*time.Second, ref)
			r := run(t, 15*time.Second, env, shimBin(t), "--", "sh", "-c", "echo ran")
			if r.code != nodeFaultCode || strings.Contains(r.stdout, "ran") {
				t.Errorf("the entrypoint form: exit %d, stdout %q; want %d and the command not run", r.code, r.stdout, nodeFaultCode)
			}
			if left := processesWith(tag); len(left) > 0 {
				t.Errorf("processes left behind: %v", left)
			}
		})
	}
}

// Issue 24: an image whose files sit on a hung mount (a lazily pulled
// image's FUSE snapshotter that stopped answering; here fuse-overlayfs,
// the FUSE file system podman uses, stopped with SIGSTOP, so every lookup
// under it waits for an answer that never comes). The preflight ends at
// PREFLIGHT_TIMEOUT with the node-fault code, a finding that names the
// image scan and the path it was reading, and the driver facts gathered
// before it: with the signals caught (a record to write), where the
// gathering runs off the process's first thread, and without, where it
// runs on main's goroutine (gatherWithin).
func TestTimeoutOnAHungImageMountNamesThePath(t *testing.T) {
	for _, caught := range []bool{false, true} {
		t.Run(map[bool]string{false: "uncaught", true: "caught"}[caught], func(t *testing.T) {
			env := shimEnv(t, fakeLibrary(t), ptr(fakenvml.H100x8("535.161.08", 12020)), "PREFLIGHT_TIMEOUT=2s")
			if caught {
				env = setEnv(env, "PREFLIGHT_PROVENANCE_DIR", t.TempDir())
			}
			root := envValue(env, "PREFLIGHT_ROOT")
			hostRoot := t.TempDir()
			env = setEnv(env, "PREFLIGHT_HOST_ROOT", hostRoot)
			d := procdriver.Driver{Version: "535.161.08", GPUs: []procdriver.GPU{procdriver.H100}}
			if err := d.Write(filepath.Join(hostRoot, "proc/driver")); err != nil {
				t.Fatal(err)
			}
			// The image's Python packages are on the hung mount: the CUDA
			// files read first are not, so the scan is where it waits.
			mnt := filepath.Join(root, "usr/local/lib/python3.10/dist-packages")
			hangMount(t, mnt)

			ref := reference(t)
			rec, c := checkJSON(t, env)
			wantNodeFaultTimeout(t, rec, c, "preflight", "PREFLIGHT_TIMEOUT=2s", "the image scan under "+root, "reading "+mnt)
			withinDeadline(t, "check", c.elapsed, 2*time.Second, ref)
			if len(rec.Host.GPUs) != 8 || rec.Host.NVML.Outcome != "ok" {
				t.Errorf("the NVML facts gathered before the scan are not in the record: %d GPUs, nvml %+v", len(rec.Host.GPUs), rec.Host.NVML)
			}
		})
	}
}

// hangMount mounts a FUSE file system at mnt (fuse-overlayfs, the one
// podman uses) and stops its daemon with SIGSTOP, so that every lookup
// under mnt waits for an answer that never comes, as under a lazily pulled
// image's snapshotter that stopped answering. The test's cleanup lets it
// go and unmounts it.
func hangMount(t *testing.T, mnt string) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Fatalf("this test needs root to mount a FUSE file system (uid %d); run 'make test-e2e' as root, as the CI does", os.Getuid())
	}
	fuse, err := exec.LookPath("fuse-overlayfs")
	if err != nil {
		t.Fatalf("fuse-overlayfs is not installed (make deps installs it with podman's packages): %v", err)
	}
	base := t.TempDir()
	lower, upper, work := filepath.Join(base, "lower"), filepath.Join(base, "upper"), filepath.Join(base, "work")
	for _, dir := range []string{filepath.Join(lower, "torch"), upper, work, mnt} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	daemon := exec.Command(fuse, "-f", "-o", "lowerdir="+lower+",upperdir="+upper+",workdir="+work, mnt)
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		daemon.Process.Signal(syscall.SIGCONT)
		exec.Command("fusermount3", "-u", mnt).Run()
		daemon.Process.Kill()
		daemon.Wait()
	})
	waitMounted(t, mnt)
	// The daemon answers once before it stops, so the kernel has its
	// answer to FUSE_INIT and later requests wait for the daemon itself.
	if _, err := os.Stat(mnt); err != nil {
		t.Fatal(err)
	}
	if err := daemon.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
}

// SIGTERM (docker stop, a pod's deletion) ends a preflight hung on an image
// mount at once, not at PREFLIGHT_TIMEOUT: caught (a record to write), with
// 143 and a line saying so; uncaught, by the kernel's default action. A
// thread waiting on FUSE keeps a caught signal pending, and the kernel
// offers a process's signals to its first thread first, so the gathering
// must not hang there.
func TestSigtermEndsAHungPreflight(t *testing.T) {
	// The names go into the mount's paths: no commas, which its options
	// would split on.
	for _, tt := range []struct {
		name   string
		caught bool
	}{{"caught", true}, {"uncaught", false}} {
		t.Run(tt.name, func(t *testing.T) {
			env := shimEnv(t, fakeLibrary(t), nil, "PREFLIGHT_TIMEOUT=30s")
			dir := t.TempDir()
			if tt.caught {
				env = setEnv(env, "PREFLIGHT_PROVENANCE_DIR", dir)
			}
			hangMount(t, filepath.Join(envValue(env, "PREFLIGHT_ROOT"), "usr/local/lib/python3.10/dist-packages"))
			ref := reference(t)
			cmd := exec.Command(shimBin(t), "--", "true")
			cmd.Env = env
			var sent time.Time
			r := runCmdThen(t, cmd, time.Minute, func(p *os.Process) {
				waitBlockedOnFUSE(t, p.Pid)
				sent = time.Now()
				p.Signal(syscall.SIGTERM)
			})
			t.Logf("exit %d after %v, %v after SIGTERM", r.code, r.elapsed.Round(time.Millisecond), time.Since(sent).Round(time.Millisecond))
			withinDeadline(t, "the run hung on FUSE, from SIGTERM on,", time.Since(sent), 0, ref)
			switch {
			case tt.caught && (r.code != 143 || !strings.Contains(r.stderr, "signal during preflight")):
				t.Errorf("exit %d, want 143 and the signal logged\nstderr: %s", r.code, r.stderr)
			case !tt.caught && r.code != -1:
				t.Errorf("exit %d, want death by SIGTERM (the kernel's default action)\nstderr: %s", r.code, r.stderr)
			}
		})
	}
}

// waitBlockedOnFUSE waits until a thread of process pid waits in the
// kernel's FUSE code for the daemon's answer: its wchan, or a frame of its
// kernel stack where root may read it, is fuse's.
func waitBlockedOnFUSE(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
		if err != nil || len(tasks) == 0 {
			t.Errorf("process %d is gone before it waited on the hung mount", pid)
			return
		}
		for _, task := range tasks {
			if inFUSE(task) {
				return
			}
		}
	}
	t.Errorf("no thread of process %d waited on the hung mount within a minute", pid)
}

// waitMounted waits until mnt is a mount point in /proc/self/mountinfo,
// without touching the file system mounted there.
func waitMounted(t *testing.T, mnt string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		f, err := os.Open("/proc/self/mountinfo")
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if fields := strings.Fields(sc.Text()); len(fields) > 4 && fields[4] == mnt {
				f.Close()
				return
			}
		}
		f.Close()
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s was not mounted within a minute", mnt)
}

// inFUSE reports whether the task directory's thread sleeps in FUSE code.
func inFUSE(task string) bool {
	wchan, _ := os.ReadFile(filepath.Join(task, "wchan"))
	stack, _ := os.ReadFile(filepath.Join(task, "stack"))
	for _, fn := range []string{"fuse_", "__fuse_", "request_wait_answer"} {
		if strings.HasPrefix(string(wchan), fn) || strings.Contains(string(stack), "] "+fn) {
			return true
		}
	}
	return false
}
