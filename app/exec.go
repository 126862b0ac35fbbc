package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/report/logs"
)

// execCommand replaces gpu-preflight with the command (same PID); it returns only on failure.
func (r *run) execCommand() int {
	r.out.Flush()
	releaseKernelEnviron(environDrop)
	r.releaseForExec()
	err := fmt.Errorf("%s: %w", r.path, syscall.Exec(r.path, r.argv, r.env.List()))
	code := startFailure(err)
	r.logNotStarted(err, code, "")
	r.complete(code, 0, err)
	return code
}

func (r *run) logNotStarted(err error, code int, remedy string) {
	e := r.log.Error().Err(logs.Err(err)).Str("command", logs.Value(r.argv[0])).Int("exitCode", code)
	if remedy != "" {
		e = e.Str("remedy", remedy)
	}
	e.Msg("cannot run the command")
}

// builtinRemedy explains a command not found that is gpu-preflight's own:
// behind ENTRYPOINT [..., "--"], `docker run IMAGE check` runs a program.
func (r *run) builtinRemedy() string {
	name := r.argv[0]
	if r.startCode != ExitNotFound || !slices.Contains(r.builtins, name) {
		return ""
	}
	return fmt.Sprintf("%q is a gpu-preflight command, not a program in the image: the image's ENTRYPOINT ends with --, "+
		"so replace the entrypoint (docker run --entrypoint gpu-preflight IMAGE %s; in Kubernetes command: [gpu-preflight, %s])",
		name, name, name)
}

// startFailure is a shell's exit code for a command that cannot start.
func startFailure(err error) int {
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOENT) {
		return ExitNotFound
	}
	return ExitNotExec
}

// LookPath finds name as a shell does, on the command's PATH: its first
// PATH= entry when there are two, as getenv(3) reads it.
func LookPath(name string, env envvars.Env) (string, error) {
	if filepath.Base(name) != name {
		return name, checkExecutable(name)
	}
	path, _ := env.Lookup("PATH")
	var firstErr error
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		err := checkExecutable(p)
		if err == nil {
			return p, nil
		}
		if firstErr == nil && !errors.Is(err, os.ErrNotExist) {
			firstErr = err
		}
	}
	if firstErr != nil {
		return "", firstErr
	}
	return "", fmt.Errorf("%s: command not found in PATH=%q: %w", name, path, os.ErrNotExist)
}

func checkExecutable(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	if st.IsDir() {
		return fmt.Errorf("%s is a directory: %w", p, os.ErrPermission)
	}
	if st.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not executable: %w", p, os.ErrPermission)
	}
	return nil
}
