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

	"github.com/gpu-preflight/gpu-preflight/test/tracetest"
)

func main() {
	dflt := tracetest.BenchShape(1000000)
	records := flag.Int("records", dflt.Records, "how many runs to write")
	form := flag.String("form", "ledger", "ledger, cri or loki")
	nodes := flag.Int("nodes", dflt.Nodes, "distinct nodes")
	images := flag.Int("images", dflt.Images, "distinct image digests")
	jobs := flag.Int("jobs", dflt.Jobs, "distinct job ids (each also a job name: PREFLIGHT_JOB_ID)")
	ranks := flag.Int("ranks", dflt.Ranks, "ranks per job")
	gpus := flag.Int("gpus", dflt.GPUs, "GPUs per node")
	flag.Parse()
	write, ok := map[string]func([]tracetest.Run) []byte{
		"ledger": tracetest.Ledger,
		"cri":    tracetest.BenchForms["cri"],
		"loki":   tracetest.BenchForms["loki"],
	}[*form]
	if !ok {
		fmt.Fprintln(os.Stderr, "tracefleet: -form is ledger, cri or loki")
		os.Exit(2)
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	shape := tracetest.Shape{Records: *records, Nodes: *nodes, Images: *images, Jobs: *jobs, Ranks: *ranks, GPUs: *gpus}
	for i := range *records {
		w.Write(write([]tracetest.Run{shape.Run(i)}))
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "tracefleet:", err)
		os.Exit(1)
	}
}
