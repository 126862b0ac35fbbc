package launcher

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/orchestrator"
)

// env is the launchers' variables as preflight/orchestrator reads them.
func env(kv ...string) facts.Orchestrator { return orchestrator.FromEnv(envvars.Parse(kv)) }

func r(launcher, source string, n int) facts.Ranks {
	return facts.Ranks{Launcher: launcher, Source: source, PerNode: n}
}

// The command lines are the launchers' documented forms: torchrun's
// ("torchrun (Elastic Launch)"), torch.distributed.launch's,
// PaddlePaddle's launch and fleetrun, DeepSpeed's "Getting Started" and
// accelerate's "Launching your Accelerate scripts".
func TestRanks(t *testing.T) {
	testRanks(t, []rankCase{
		{"torchrun --nproc-per-node=N", "torchrun --standalone --nnodes=1 --nproc-per-node=8 train.py --lr 0.1", nil,
			[]facts.Ranks{r("torchrun", "--nproc-per-node=8", 8)}},
		{"torchrun --nproc_per_node N, after options with values", "torchrun --nnodes 2 --rdzv-backend c10d --rdzv-endpoint host:29400 --nproc_per_node 4 train.py", nil,
			[]facts.Ranks{r("torchrun", "--nproc_per_node 4", 4)}},
		{"python -m torch.distributed.launch", "python3 -u -m torch.distributed.launch --nproc_per_node=2 --use_env train.py", nil,
			[]facts.Ranks{r("torchrun", "--nproc_per_node=2", 2)}},
		{"the training script's own options are the script's", "torchrun --standalone train.py --nproc-per-node 16", nil, nil},
		{"gpu and auto let torchrun count the GPUs itself", "torchrun --nproc-per-node gpu train.py", nil, nil},
		{"PET_NPROC_PER_NODE is torchrun's default", "torchrun --nnodes 2 train.py", []string{"PET_NPROC_PER_NODE=8"},
			[]facts.Ranks{r("torchrun", "PET_NPROC_PER_NODE=8", 8)}},
		{"the command line wins over PET_NPROC_PER_NODE", "torchrun --nproc-per-node 4 train.py", []string{"PET_NPROC_PER_NODE=8"},
			[]facts.Ranks{r("torchrun", "--nproc-per-node 4", 4)}},
		{"PET_NPROC_PER_NODE for a pod that runs torchrun in a script", "bash run.sh", []string{"PET_NPROC_PER_NODE=8"},
			[]facts.Ranks{r("torchrun", "PET_NPROC_PER_NODE=8", 8)}},
		{"paddle --gpus lists one device per process", "python -m paddle.distributed.launch --gpus 0,1,2,3 train.py", nil,
			[]facts.Ranks{{Launcher: "paddle", Source: "--gpus 0,1,2,3", PerNode: 4, Devices: []int{0, 1, 2, 3}}}},
		{"paddle --devices=", "python -m paddle.distributed.launch --devices=4,5 --log_dir log train.py", nil,
			[]facts.Ranks{{Launcher: "paddle", Source: "--devices=4,5", PerNode: 2, Devices: []int{4, 5}}}},
		{"fleetrun --gpus", "fleetrun --gpus=0,1 train.py", nil,
			[]facts.Ranks{{Launcher: "paddle", Source: "--gpus=0,1", PerNode: 2, Devices: []int{0, 1}}}},
		{"PADDLE_DEVICES overrides paddle's --devices", "python -m paddle.distributed.launch --devices 0,1 train.py", []string{"PADDLE_DEVICES=0,1,2"},
			[]facts.Ranks{{Launcher: "paddle", Source: "PADDLE_DEVICES=0,1,2", PerNode: 3, Devices: []int{0, 1, 2}}}},
		{"paddle --nproc_per_node", "python -m paddle.distributed.launch --nproc_per_node 8 train.py", nil,
			[]facts.Ranks{r("paddle", "--nproc_per_node 8", 8)}},
		{"deepspeed --num_gpus", "deepspeed --num_gpus=2 train.py --deepspeed --deepspeed_config ds_config.json", nil,
			[]facts.Ranks{r("deepspeed", "--num_gpus=2", 2)}},
		{"deepspeed's flags take no value", "deepspeed --no_local_rank --num_gpus 4 train.py", nil,
			[]facts.Ranks{r("deepspeed", "--num_gpus 4", 4)}},
		{"accelerate --num_processes on one machine", "accelerate launch --multi_gpu --num_processes=2 train.py --arg1", nil,
			[]facts.Ranks{{Launcher: "accelerate", Source: "--num_processes=2", PerNode: 2,
				Assumed: "one machine: --num_machines is not given, and accelerate's config file may set it"}}},
		{"accelerate divides --num-processes by --num-machines", "accelerate launch --num-processes 16 --num-machines 2 --machine_rank 0 train.py", nil,
			[]facts.Ranks{r("accelerate", "--num-processes 16, --num-machines 2", 8)}},
		{"accelerate rounds --num_processes / --num_machines down, as its launcher does", "accelerate launch --num_processes=17 --num_machines=2 train.py", nil,
			[]facts.Ranks{r("accelerate", "--num_processes=17, --num_machines=2", 8)}},
		{"SLURM_NTASKS_PER_NODE", "python train.py", []string{"SLURM_NTASKS_PER_NODE=8"},
			[]facts.Ranks{r("slurm", "SLURM_NTASKS_PER_NODE=8", 8)}},
		{"Slurm tasks with GPUs of their own", "python train.py", []string{"SLURM_NTASKS_PER_NODE=8", "SLURM_GPUS_PER_TASK=1"}, nil},
		{"LOCAL_WORLD_SIZE of a torchrun worker", "python train.py", []string{"LOCAL_WORLD_SIZE=4"},
			[]facts.Ranks{r("torch-worker", "LOCAL_WORLD_SIZE=4", 4)}},
		{"a value that is no count is no statement", "torchrun --nproc-per-node=99999999999 train.py", []string{"LOCAL_WORLD_SIZE=x", "SLURM_NTASKS_PER_NODE=0"}, nil},
		{"python running a script is no launcher", "python train.py --nproc_per_node 8", nil, nil},
	})
}

// rankCase is a command line and environment, and the counts Ranks reads from them.
type rankCase struct {
	rule string
	argv string
	env  []string
	want []facts.Ranks
}

func testRanks(t *testing.T, tests []rankCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			got := Ranks(strings.Fields(tt.argv), env(tt.env...))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s %s:\n got %+v\nwant %+v", tt.env, tt.argv, got, tt.want)
			}
		})
	}
}

func TestDeviceListKeepsAtMostMaxDevices(t *testing.T) {
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = "1"
	}
	got, ok := deviceList(strings.Join(ids, ","))
	if !ok || got.PerNode != 1000 || len(got.Devices) != maxDevices {
		t.Errorf("%d processes, %d devices kept", got.PerNode, len(got.Devices))
	}
}

func FuzzRanks(f *testing.F) {
	for _, seed := range []string{
		"torchrun\x00--standalone\x00--nnodes=1\x00--nproc-per-node=4\x00train.py",
		"python\x00-m\x00torch.distributed.launch\x00--nproc_per_node=2\x00train.py",
		"python\x00-m\x00paddle.distributed.launch\x00--gpus=0,1,2,3\x00train.py\x00--lr=0.01",
		"deepspeed\x00--num_gpus=2\x00train.py\x00--deepspeed",
		"accelerate\x00launch\x00--multi_gpu\x00--num_processes=2\x00train.py",
	} {
		f.Add(seed, "8")
	}
	f.Fuzz(func(t *testing.T, argv, value string) {
		for _, r := range Ranks(strings.Split(argv, "\x00"), env("PET_NPROC_PER_NODE="+value, "LOCAL_WORLD_SIZE="+value)) {
			if r.PerNode < 1 || r.PerNode > maxPerNode || len(r.Devices) > maxDevices {
				t.Errorf("out of bounds: %+v", r)
			}
		}
	})
}

// Nodes reads --nnodes as torchrun's and paddle.distributed.launch's
// parsers do, before the training script: torchrun's documented forms
// ("--nnodes=2", "--nnodes=1:4" for elastic), python -m, and a script's own
// --nnodes left to the script.
func TestNodesIsTheLaunchersNNodes(t *testing.T) {
	for _, tc := range []struct{ argv, value, source string }{
		{"torchrun --nnodes=2 --nproc-per-node=8 train.py", "2", "--nnodes=2"},
		{"torchrun --nnodes 1:4 --nproc-per-node=8 --rdzv-backend=c10d train.py", "1:4", "--nnodes 1:4"},
		{"python -m torch.distributed.run --standalone --nnodes=1 train.py", "1", "--nnodes=1"},
		{"python3 -m paddle.distributed.launch --nnodes 2 --devices 0,1 train.py", "2", "--nnodes 2"},
		{"torchrun --nproc-per-node=8 train.py --nnodes 4", "", ""},
		{"python train.py --nnodes 4", "", ""},
		{"deepspeed --num_nodes 2 train.py", "", ""},
	} {
		v, src := Nodes(strings.Fields(tc.argv))
		if v != tc.value || src != tc.source {
			t.Errorf("%s: %q from %q, want %q from %q", tc.argv, v, src, tc.value, tc.source)
		}
	}
}
