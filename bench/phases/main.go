// Command phases reads `perf script -F comm,ip,sym` of many gpu-preflight
// starts and gives each sample to the first phase one of its frames belongs
// to (bench/profile.sh runs the whole measurement):
//
//	perf script -F comm,ip,sym | go run ./bench/phases -comm gpu-preflight -task-clock-ms 3.6
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// phase is a part of a start-up, known by the frames its samples hold.
type phase struct {
	name   string
	frames []string // substrings of a frame's symbol
}

// phases are tried in order. Exec comes first: the kernel loading the shim
// and tearing it down for the command.
var phases = []phase{
	{"kernel: execve (loading the shim, then replacing it with the command)", []string{"__x64_sys_execve", "exit_mmap"}},
	{"Go runtime start-up before main (schedinit, heap, first thread)", []string{"runtime.schedinit", "runtime.rt0_go", "_rt0_amd64"}},
	{"package initialisation (var blocks and init funcs of every package)", []string{"runtime.doInit1"}},
	{"signal handling: os/signal's goroutines and the threads they lock", []string{"os/signal.", "runtime.ensureSigM", "runtime.signal_recv", "runtime.startTemplateThread"}},
	{"configuration and flags", []string{"main.loadConfig", "main.newFlagSet", "main.addConfigFlags", "flag.(*FlagSet)"}},
	{"gathering: the image scan (CUDA libraries, site-packages)", []string{"preflight/image."}},
	{"gathering: host (procfs, sysfs, /dev, cgroup, shm)", []string{"preflight/host."}},
	{"gathering: container (environment, CUDA files, compat libraries)", []string{"preflight/container."}},
	{"gathering: NVML probe start and wait", []string{"preflight/nvml."}},
	{"checks and policy", []string{"preflight/check.", "preflight/policy.", "preflight/require."}},
	{"provenance file write (encode, fsync, link)", []string{"report/store.", "report/ledger."}},
	{"log lines (zerolog, redaction, bounds) and the provenance line", []string{"report/logs.", "rs/zerolog"}},
	{"building the record (redaction, orchestrator, run id)", []string{"report.New"}},
	{"exec of the command (path lookup, syscall.Exec)", []string{"main.execCommand", "syscall.Exec"}},
	{"garbage collector", []string{"runtime.gcBgMarkWorker", "runtime.gcStart", "runtime.bgsweep", "runtime.bgscavenge"}},
	{"goroutine stacks growing (morestack copies a stack to twice its size)", []string{"runtime.morestack", "runtime.newstack"}},
	{"threads: creating and starting them, the scheduler, sysmon", []string{"runtime.newm", "runtime.mstart", "runtime.sysmon", "runtime.schedule", "runtime.findRunnable"}},
	{"Go runtime around main (gcenable, GOMAXPROCS updater, main's own frames)", []string{"runtime.main"}},
}

func main() {
	comm := flag.String("comm", "gpu-preflight", "command name (perf truncates it to 15 bytes) whose samples count")
	taskClock := flag.Float64("task-clock-ms", 0, "CPU ms per start (perf stat's task-clock), to turn shares into ms")
	flag.Parse()
	counts, total, err := attribute(os.Stdin, *comm)
	if err != nil {
		fmt.Fprintln(os.Stderr, "phases:", err)
		os.Exit(1)
	}
	if total == 0 {
		fmt.Fprintf(os.Stderr, "phases: no samples of %q in the input\n", *comm)
		os.Exit(1)
	}
	fmt.Println("| phase | share of CPU samples | CPU ms per start |")
	fmt.Println("|---|---:|---:|")
	for i, p := range append(phases, phase{name: "other"}) {
		share := float64(counts[i]) / float64(total)
		fmt.Printf("| %s | %.1f%% | %.2f |\n", p.name, 100*share, share**taskClock)
	}
	fmt.Printf("| all (%d samples) | 100%% | %.2f |\n", total, *taskClock)
}

// attribute counts the samples of comm per phase, the last count unclaimed.
func attribute(r io.Reader, comm string) ([]int, int, error) {
	if len(comm) > 15 {
		comm = comm[:15]
	}
	counts := make([]int, len(phases)+1)
	total := 0
	var stack []string
	keep := false
	flush := func() {
		if keep {
			counts[classify(stack)]++
			total++
		}
		stack, keep = stack[:0], false
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "":
			flush()
		case line[0] != ' ' && line[0] != '\t':
			// A sample's header line: "comm" then the first frame may follow.
			flush()
			keep = strings.TrimSpace(line) == comm || strings.HasPrefix(line, comm+" ")
		default:
			// "\t    ffffffff81000000 symbol+0x12"
			fields := strings.Fields(line)
			if len(fields) >= 2 {
				stack = append(stack, fields[1])
			}
		}
	}
	flush()
	return counts, total, sc.Err()
}

// classify returns the first phase a frame of stack belongs to, or len(phases).
func classify(stack []string) int {
	for i, p := range phases {
		for _, frame := range stack {
			for _, f := range p.frames {
				if strings.Contains(frame, f) {
					return i
				}
			}
		}
	}
	return len(phases)
}
