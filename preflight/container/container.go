// Package container gathers what the image says about itself from its
// environment and files: the variables of envvars.Read and the identity they
// carry, the CUDA toolkit under /usr/local/cuda and the forward-compatibility
// libcuda beside it; and which host GPUs the process will see (VisibleGPUs).
// Gatherers fail soft: a missing file is a fact, other failures warnings.
package container

import (
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
	"github.com/gpu-preflight/gpu-preflight/preflight/identity"
)

// Gather reads the container facts under root and from env, its environment.
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

// Env returns the variables of env that gpu-preflight reads (envvars.Read), as set.
func Env(env envvars.Env) map[string]string { return env.Filter(envvars.IsRead) }
