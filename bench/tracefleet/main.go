// Command tracefleet writes a generated fleet's provenance for bench/trace.sh:
//
//	go run ./bench/tracefleet -records 1000000 -form cri > fleet.log
//
// Its runs are tracetest's (report.New's records, report/logs' lines):
// jobs retried, nodes upgraded, an NVML hang and a failing image in ten, so
// every section of trace's answer has work to do.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/gpu-preflight/gpu-preflight/test/tracetest"
)

func main() {
	records := flag.Int("records", 1000000, "how many runs to write")
	form := flag.String("form", "ledger", "ledger, cri or loki")
	nodes := flag.Int("nodes", 2000, "distinct nodes")
	images := flag.Int("images", 100, "distinct image digests")
	jobs := flag.Int("jobs", 5000, "distinct job ids (each also a job name: PREFLIGHT_JOB_ID)")
	ranks := flag.Int("ranks", 16, "ranks per job")
	gpus := flag.Int("gpus", 8, "GPUs per node")
	flag.Parse()
	write, ok := map[string]func([]tracetest.Run) []byte{
		"ledger": tracetest.Ledger,
		"cri":    func(rs []tracetest.Run) []byte { return tracetest.Forms[0].Write(tracetest.Entries(rs, -1)) },
		"loki":   func(rs []tracetest.Run) []byte { return formNamed("loki-logcli-jsonl")(tracetest.Entries(rs, -1)) },
	}[*form]
	if !ok {
		fmt.Fprintln(os.Stderr, "tracefleet: -form is ledger, cri or loki")
		os.Exit(2)
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	step := 30 * 24 * time.Hour / time.Duration(*records)
	for i := range *records {
		attempt := i / (*jobs * *ranks)
		j := (i / *ranks) % *jobs
		rank := i % *ranks
		node := (j**ranks + rank) % *nodes
		img := (j + attempt) % *images
		r := tracetest.Run{
			RunID: tracetest.RunID(i), At: start.Add(time.Duration(i) * step),
			Node: fmt.Sprintf("gpu-node-%04d", node), Job: fmt.Sprintf("job-%05d", j), Rank: rank,
			Driver: "535.161.08", DriverCUDA: "12.2", GPUs: *gpus,
			Digest: fmt.Sprintf("sha256:%064x", img),
			Ref:    fmt.Sprintf("registry.example/ml/train-%d:%d", img%10, img),
		}
		if i > *records/2 && node < 48 && node%16 == 3 {
			r.Driver, r.DriverCUDA = "550.54.15", "12.4"
		}
		switch {
		case node == 9:
			r.Abort, r.NodeFault = []string{"nvml"}, true
		case img%10 == 7 && i > *records/3:
			r.Exit = tracetest.Exit(1)
		default:
			r.Exit = tracetest.Exit(0)
		}
		w.Write(write([]tracetest.Run{r}))
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "tracefleet:", err)
		os.Exit(1)
	}
}

func formNamed(name string) func([]tracetest.Entry) []byte {
	for _, f := range tracetest.Forms {
		if f.Name == name {
			return f.Write
		}
	}
	panic("no form " + name)
}
