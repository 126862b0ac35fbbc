// Command tracefleet writes the provenance records of a generated fleet as
// JSON lines, for bench/trace.sh's scale measurement of `gpu-preflight trace`:
//
//	go run ./bench/tracefleet -records 1000000 > fleet.jsonl
//
// Every record is made by report.New, so it has a real one's shape and
// size; jobs are retried, some nodes upgraded, one node's NVML hangs and one
// image in ten fails, so every section of trace's answer has work to do.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/gpu-preflight/gpu-preflight/test/tracetest"
)

func main() {
	records := flag.Int("records", 1000000, "how many records to write")
	nodes := flag.Int("nodes", 2000, "distinct nodes")
	images := flag.Int("images", 100, "distinct image digests")
	jobs := flag.Int("jobs", 5000, "distinct job ids (each also a job name: PREFLIGHT_JOB_ID)")
	ranks := flag.Int("ranks", 16, "ranks per job")
	gpus := flag.Int("gpus", 4, "GPUs per node (the record grows with them: 4 make about 4 KiB)")
	flag.Parse()

	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	step := 30 * 24 * time.Hour / time.Duration(*records) // a month of runs
	for i := range *records {
		attempt := i / (*jobs * *ranks)
		j := (i / *ranks) % *jobs
		rank := i % *ranks
		node := (j**ranks + rank) % *nodes
		r := tracetest.Run{
			RunID: tracetest.RunID(i), At: start.Add(time.Duration(i) * step),
			Node: fmt.Sprintf("gpu-node-%04d", node), Job: fmt.Sprintf("job-%05d", j), Rank: rank,
			Driver: "535.161.08", DriverCUDA: "12.2", GPUs: *gpus,
			Digest: fmt.Sprintf("sha256:%064x", (j+attempt)%*images),
			Ref:    fmt.Sprintf("registry.example/ml/train:%d", (j+attempt)%*images),
		}
		// A rolling upgrade half way: 3 of the first 48 nodes run 550.
		if i > *records/2 && node < 48 && node%16 == 3 {
			r.Driver, r.DriverCUDA = "550.54.15", "12.4"
		}
		switch {
		case node == 9:
			r.Abort, r.NodeFault = []string{"nvml"}, true
		case (j+attempt)%*images%10 == 7 && i > *records/3:
			r.Exit = tracetest.Exit(1)
		default:
			r.Exit = tracetest.Exit(0)
		}
		b, err := json.Marshal(tracetest.Record(r))
		if err != nil {
			fmt.Fprintln(os.Stderr, "tracefleet:", err)
			os.Exit(1)
		}
		w.Write(b)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "tracefleet:", err)
		os.Exit(1)
	}
}
