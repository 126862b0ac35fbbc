// Package container gathers what the image says about itself from its
// environment and files: the environment variables gpu-preflight reads
// (the table envvars.Read) and the image identity they carry (identity),
// the CUDA toolkit under /usr/local/cuda, and the forward-compatibility
// libcuda libraries beside it. It also decides which of the host's GPUs
// the training process will see (VisibleGPUs).
//
// Requirements, the library stack and frameworks are filled by other
// packages (require, image). Every gatherer fails
// soft: a missing file is a fact, and any other failure becomes a warning
// for the caller to log.
package container

import (
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
	"github.com/gpu-preflight/gpu-preflight/preflight/identity"
)

// Gather reads the container facts under root from env, the container's
// environment.
func Gather(root fsroot.Root, env envvars.Env) (facts.Container, []string) {
	var c facts.Container
	var warns []string
	c.Env = Env(env)
	c.Identity = identity.FromEnv(env)
	var w []string
	c.CUDA, w = gatherCUDA(root, c.Env)
	warns = append(warns, w...)
	c.Compat, w = gatherCompat(root)
	warns = append(warns, w...)
	return c, warns
}

// Env returns the variables of env that gpu-preflight reads, the table
// envvars.Read, with their values as set ("" for a variable set empty).
func Env(env envvars.Env) map[string]string { return env.Filter(envvars.IsRead) }
