// Package launcher reads, from a job's command line and environment, how
// many processes its launcher (torchrun, PaddlePaddle, deepspeed,
// accelerate, Slurm) starts on this node, each option as its launcher's
// own parser reads it (docs/node-health.md, "More ranks than GPUs").
package launcher

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

// Bounds: a larger count is no count; a device list keeps maxDevices.
const (
	maxPerNode = 1 << 16
	maxDevices = 64
)

// Ranks returns every per-node process count that argv, the training
// command, and the launchers' variables state.
func Ranks(argv []string, o facts.Orchestrator) []facts.Ranks {
	var out []facts.Ranks
	name, args := command(argv)
	switch name {
	case facts.LauncherTorchrun:
		out = append(out, torchrun(args, o.Torchrun.NProcPerNode)...)
	case facts.LauncherPaddle:
		out = append(out, paddle(args, o.Paddle)...)
	case facts.LauncherDeepSpeed:
		if v, src, ok := option(args, deepspeedFlags, "--num_gpus", "--num_accelerators"); ok {
			out = appendCount(out, facts.Ranks{Launcher: name, Source: src}, v)
		}
	case facts.LauncherAccelerate:
		out = append(out, accelerate(args)...)
	}
	if v := o.Torchrun.NProcPerNode; v != "" && name != facts.LauncherTorchrun {
		// Kubeflow sets it for whatever the pod runs.
		out = appendCount(out, facts.Ranks{Launcher: facts.LauncherTorchrun, Source: "PET_NPROC_PER_NODE=" + v}, v)
	}
	out = append(out, slurm(o.Slurm)...)
	if v := o.Torchrun.LocalWorldSize; v != "" {
		out = appendCount(out, facts.Ranks{Launcher: facts.LauncherTorchWorker, Source: "LOCAL_WORLD_SIZE=" + v}, v)
	}
	return out
}

// Nodes is torchrun's or paddle's --nnodes ("2", "1:4") and the option as
// given; "" when none.
func Nodes(argv []string) (value, source string) {
	name, args := command(argv)
	flags := torchrunFlags
	switch name {
	case facts.LauncherPaddle:
		flags = nil
	case facts.LauncherTorchrun:
	default:
		return "", ""
	}
	value, source, _ = option(args, flags, "--nnodes")
	return value, source
}

// command names the launcher argv runs, as its executable or python -m,
// and the arguments it parses.
func command(argv []string) (string, []string) {
	if len(argv) == 0 {
		return "", nil
	}
	base := filepath.Base(argv[0])
	switch {
	case base == "torchrun":
		return facts.LauncherTorchrun, argv[1:]
	case base == "deepspeed":
		return facts.LauncherDeepSpeed, argv[1:]
	case base == "fleetrun":
		return facts.LauncherPaddle, argv[1:]
	case base == "accelerate" && len(argv) > 1 && argv[1] == "launch":
		return facts.LauncherAccelerate, argv[2:]
	case strings.HasPrefix(base, "python"):
		module, args := pythonModule(argv[1:])
		return moduleLauncher(module), args
	}
	return "", nil
}

// moduleLauncher names the launcher run as python -m module, "" for none.
func moduleLauncher(module string) string {
	switch module {
	case "torch.distributed.run", "torch.distributed.launch":
		return facts.LauncherTorchrun
	case "paddle.distributed.launch", "paddle.distributed.fleet.launch":
		return facts.LauncherPaddle
	case "deepspeed.launcher.runner":
		return facts.LauncherDeepSpeed
	case "accelerate.commands.launch":
		return facts.LauncherAccelerate
	}
	return ""
}

// pythonModule finds python's -m MODULE and the arguments after it.
func pythonModule(args []string) (string, []string) {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-m" && i+1 < len(args):
			return args[i+1], args[i+2:]
		case strings.HasPrefix(a, "-m"):
			return a[2:], args[i+1:]
		case a == "-X" || a == "-W":
			i++
		case a == "-c" || a == "-" || !strings.HasPrefix(a, "-"):
			return "", nil
		}
	}
	return "", nil
}

// option finds the last of names among the options before the script,
// as argparse reads them; it returns the value and the option as given.
func option(args []string, flags []string, names ...string) (value, source string, found bool) {
	return optionIn(args, args, flags, names...)
}

// optionIn is option matching names in match, args respelled.
func optionIn(args, match []string, flags []string, names ...string) (value, source string, found bool) {
	for i := 0; i < len(match); i++ {
		a := match[i]
		if a == "--" || !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		opt, v, inline := strings.Cut(a, "=")
		if slices.Contains(names, opt) {
			switch {
			case inline:
				value, source, found = v, args[i], true
			case i+1 < len(args):
				value, source, found = args[i+1], args[i]+" "+args[i+1], true
			}
		}
		if !inline && !slices.Contains(flags, opt) {
			i++
		}
	}
	return value, source, found
}

// appendCount adds r counting v; "gpu", "auto" or "cpu" add nothing.
func appendCount(out []facts.Ranks, r facts.Ranks, v string) []facts.Ranks {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 || n > maxPerNode {
		return out
	}
	r.PerNode = n
	return append(out, r)
}

// torchrunFlags take no value (torch/distributed/run.py, get_args_parser;
// launch.py adds --use-env).
var torchrunFlags = []string{"--standalone", "-m", "--module", "--no-python", "--no_python", "--run-path", "--run_path",
	"--use-env", "--use_env", "-h", "--help"}

// torchrun's --nproc-per-node defaults to PET_NPROC_PER_NODE (argparse_util.py).
func torchrun(args []string, petNProc string) []facts.Ranks {
	r := facts.Ranks{Launcher: facts.LauncherTorchrun}
	v, src, ok := option(args, torchrunFlags, "--nproc-per-node", "--nproc_per_node")
	if !ok {
		if petNProc == "" {
			return nil
		}
		v, src = petNProc, "PET_NPROC_PER_NODE="+petNProc
	}
	r.Source = src
	return appendCount(nil, r, v)
}

// paddle's options all take a value; PADDLE_DEVICES and
// PADDLE_NPROC_PER_NODE override them (launch/context/args_envs.py).
func paddle(args []string, p facts.Paddle) []facts.Ranks {
	var out []facts.Ranks
	devices, src, ok := option(args, nil, "--devices", "--gpus", "--npus", "--xpus")
	if v := p.Devices; v != "" {
		devices, src, ok = v, "PADDLE_DEVICES="+v, true
	}
	if ok {
		if r, listed := deviceList(devices); listed {
			r.Launcher, r.Source = facts.LauncherPaddle, src
			out = append(out, r)
		}
	}
	nproc, src, ok := option(args, nil, "--nproc_per_node")
	if v := p.NProcPerNode; v != "" {
		nproc, src, ok = v, "PADDLE_NPROC_PER_NODE="+v, true
	}
	if ok {
		out = appendCount(out, facts.Ranks{Launcher: facts.LauncherPaddle, Source: src}, nproc)
	}
	return out
}

// deviceList reads "0,1,2,3": one process per device.
func deviceList(s string) (facts.Ranks, bool) {
	var r facts.Ranks
	for _, f := range strings.Split(s, ",") {
		id, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || id < 0 || id >= maxPerNode {
			return r, false
		}
		r.PerNode++
		if len(r.Devices) < maxDevices {
			r.Devices = append(r.Devices, id)
		}
	}
	return r, r.PerNode > 0 && r.PerNode <= maxPerNode
}

// deepspeedFlags take no value (deepspeed/launcher/runner.py).
var deepspeedFlags = []string{"--module", "--no_python", "--no_local_rank", "--no_ssh", "--no_ssh_check", "--force_multi",
	"--save_pid", "--elastic_training", "--bind_cores_to_rank", "-h", "--help"}

// accelerateFlags take no value (src/accelerate/commands/launch.py).
var accelerateFlags = []string{"-h", "--help", "--quiet", "-q", "--cpu", "--multi_gpu", "--tpu", "--ipex",
	"--enable_cpu_affinity", "--dynamo_use_fullgraph", "--dynamo_use_dynamic", "--use_deepspeed", "--use_fsdp",
	"--use_megatron_lm", "--use_xpu", "--same_network", "-m", "--module", "--no_python", "--tpu_cluster",
	"--no_tpu_cluster", "--tpu_use_sudo", "--downcast_bf16", "--fp8_use_autocast_during_eval", "--debug"}

// accelerate starts --num_processes // --num_machines per machine
// (utils/launch.py); options take hyphens or underscores alike.
func accelerate(args []string) []facts.Ranks {
	norm := make([]string, len(args))
	for i, a := range args {
		if opt, v, inline := strings.Cut(a, "="); strings.HasPrefix(a, "--") {
			norm[i] = "--" + strings.ReplaceAll(opt[2:], "-", "_")
			if inline {
				norm[i] += "=" + v
			}
		} else {
			norm[i] = a
		}
	}
	total, src, ok := optionIn(args, norm, accelerateFlags, "--num_processes")
	n, err := strconv.Atoi(total)
	if !ok || err != nil || n < 1 {
		return nil
	}
	r := facts.Ranks{Launcher: facts.LauncherAccelerate, Source: src}
	machines := 1
	if v, msrc, ok := optionIn(args, norm, accelerateFlags, "--num_machines"); ok {
		if m, err := strconv.Atoi(v); err == nil && m > 0 {
			machines = m
			r.Source += ", " + msrc
		}
	} else {
		r.Assumed = "one machine: --num_machines is not given, and accelerate's config file may set it"
	}
	return appendCount(nil, r, strconv.Itoa(n/machines))
}
