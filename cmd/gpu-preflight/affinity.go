package main

import (
	"fmt"
	"io"

	"github.com/gpu-preflight/gpu-preflight/preflight/affinity"
)

// slurmNote says why affinity offers no Slurm form.
const slurmNote = `Slurm has no equivalent to generate: its node features (slurm.conf Feature=, sbatch --constraint)
are plain words an administrator assigns, with no numeric comparison and no standard names for the
driver version or compute capability, so no constraint can be computed that every site's nodes carry.
Where a site publishes features such as "nvdrv580" or "cc90", a constraint can be written by hand from
the driver ranges above; otherwise run gpu-preflight as the job's first step (examples/slurm).`

// cmdAffinity prints a Kubernetes nodeAffinity over GFD labels for the
// image at PREFLIGHT_ROOT (--root): exit 0, 1 when no node can run it, 64
// on a usage error.
func cmdAffinity(args, environ []string, stdout, stderr io.Writer) int {
	overrides := map[string]string{}
	fs := newFlagSet("affinity", stderr, overrides, args)
	deprecated := fs.Bool("deprecated-labels", false, "match on GFD's older cuda.driver.* labels (GFD before v0.15.0)")
	slurm := fs.Bool("slurm", false, "say what Slurm offers instead")
	if err := parseFlags(fs, args, stdout); err != nil {
		return usageExit(stderr, err)
	}
	if fs.NArg() > 0 {
		return usageExit(stderr, usagef("affinity takes no arguments (the image is --root DIR)"))
	}
	if *slurm {
		fmt.Fprintln(stdout, slurmNote)
		return exitOK
	}
	in, cfg, err := gatherFor(overrides, environ)
	if err != nil {
		return usageExit(stderr, err)
	}
	ai := affinity.Input{Container: in.Facts.Container, Options: in.Options, Policy: cfg.policy, Ignore: cfg.ignore,
		Labels: affinity.CurrentLabels}
	if *deprecated {
		ai.Labels = affinity.DeprecatedLabels
	}
	a, err := affinity.For(ai)
	if err != nil {
		fmt.Fprintf(stderr, "gpu-preflight affinity: %v\n", err)
		return 1
	}
	c := in.Facts.Container
	labels := "GPU Feature Discovery labels (GFD >= v0.15.0 for these names)"
	if *deprecated {
		labels = "GPU Feature Discovery's deprecated cuda.driver.* labels"
	}
	header := fmt.Sprintf("gpu-preflight affinity for the image at %s: CUDA %s, %d requirement(s), %d framework(s), PREFLIGHT_POLICY=%s.\n"+
		"Paste under the pod spec's affinity:. Nodes need %s.",
		cfg.Root, orDash(c.CUDA.Version), len(c.Requirements), len(c.Frameworks), cfg.policy, labels)
	fmt.Fprint(stdout, a.YAML(header))
	return exitOK
}
