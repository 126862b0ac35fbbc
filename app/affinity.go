package app

import (
	"fmt"
	"io"

	"github.com/gpu-preflight/gpu-preflight/preflight/affinity"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/policy"
	"github.com/gpu-preflight/gpu-preflight/report/termsafe"
)

// SlurmNote says why affinity offers no Slurm form.
const SlurmNote = `Slurm has no equivalent to generate: its node features (slurm.conf Feature=, sbatch --constraint)
are plain words an administrator assigns, with no numeric comparison and no standard names for the
driver version or compute capability, so no constraint can be computed that every site's nodes carry.
Where a site publishes features such as "nvdrv580" or "cc90", a constraint can be written by hand from
the driver ranges above; otherwise run gpu-preflight as the job's first step (examples/slurm).`

// Affinity prints a Kubernetes nodeAffinity over GPU Feature Discovery's
// labels (deprecated: its cuda.driver.* labels) for the image at the root:
// exit 0, or 1 when no node can run it.
func Affinity(cfg Config, env envvars.Env, deprecated bool, stdout, stderr io.Writer) int {
	in := checkInput(cfg, env)
	ai := affinity.Input{Container: in.Facts.Container, Options: in.Options, Policy: policy.Policy(cfg.Policy), Ignore: cfg.ignore,
		Labels: affinity.CurrentLabels}
	labels := "GPU Feature Discovery labels (GFD >= v0.15.0 for these names)"
	if deprecated {
		ai.Labels = affinity.DeprecatedLabels
		labels = "GPU Feature Discovery's deprecated cuda.driver.* labels"
	}
	a, err := affinity.For(ai)
	if err != nil {
		fmt.Fprintf(stderr, "gpu-preflight affinity: %v\n", err)
		return 1
	}
	c := in.Facts.Container
	header := fmt.Sprintf("gpu-preflight affinity for the image at %s: CUDA %s, %d requirement(s), %d framework(s), PREFLIGHT_POLICY=%s.\n"+
		"Paste under the pod spec's affinity:. Nodes need %s.",
		cfg.Root, orDash(c.CUDA.Version), len(c.Requirements), len(c.Frameworks), cfg.Policy, labels)
	fmt.Fprint(termsafe.NewWriter(stdout), a.YAML(header))
	return ExitOK
}
