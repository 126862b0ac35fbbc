package trace_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/report/trace"
	"github.com/gpu-preflight/gpu-preflight/test/tracetest"
)

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestANodesLogDirectoriesAreReadAsLaidOut: a node's /var/log with the
// kubelet's pod logs (rotated and gzip'd files beside the current one),
// /var/log/containers' links to them, and Docker's json-file and local
// files with their rotations: every run once, with the ledger's answers.
func TestANodesLogDirectoriesAreReadAsLaidOut(t *testing.T) {
	runs := tracetest.SmallFleet()
	want := traceOf(t, trace.Options{}, tracetest.Ledger(runs))
	es := tracetest.Entries(runs, tracetest.LongRun)
	forms := map[string]func([]tracetest.Entry) []byte{}
	for _, f := range tracetest.Forms {
		forms[f.Name] = f.Write
	}
	root := t.TempDir()
	// Each run a pod of its own; the first half of a pod's log rotated.
	byPod := map[string][]tracetest.Entry{}
	var pods []string
	for _, e := range es {
		if _, ok := byPod[e.Pod]; !ok {
			pods = append(pods, e.Pod)
		}
		byPod[e.Pod] = append(byPod[e.Pod], e)
	}
	for i, pod := range pods {
		pes := byPod[pod]
		half := len(pes) / 2
		id := pes[0].ID
		switch i % 3 {
		case 0:
			dir := filepath.Join(root, "log/pods", "ml_"+pod+"_uid", "train")
			write(t, filepath.Join(dir, "0.log.20261124-080000.gz"), gz(forms["cri-containerd"](pes[:half])))
			write(t, filepath.Join(dir, "0.log"), forms["cri-containerd"](pes[half:]))
			link := filepath.Join(root, "log/containers", pod+"_ml_train-"+id+".log")
			os.MkdirAll(filepath.Dir(link), 0o755)
			if err := os.Symlink(filepath.Join(dir, "0.log"), link); err != nil {
				t.Fatal(err)
			}
		case 1:
			dir := filepath.Join(root, "lib/docker/containers", id)
			write(t, filepath.Join(dir, id+"-json.log.1"), forms["docker-json-file"](pes[:half]))
			write(t, filepath.Join(dir, id+"-json.log"), forms["docker-json-file"](pes[half:]))
		case 2:
			dir := filepath.Join(root, "lib/docker/containers", id, "local-logs")
			write(t, filepath.Join(dir, "container.log.1.gz"), gz(forms["docker-local"](pes[:half])))
			write(t, filepath.Join(dir, "container.log"), forms["docker-local"](pes[half:]))
		}
	}
	for _, operands := range [][]string{{root}, {filepath.Join(root, "log"), filepath.Join(root, "lib")},
		{filepath.Join(root, "log/containers"), filepath.Join(root, "lib")}} {
		sources, err := trace.Sources(operands, nil)
		if err != nil {
			t.Fatal(err)
		}
		tr := trace.New(trace.Options{})
		for _, err := range tr.Read(sources) {
			if err != nil {
				t.Fatal(err)
			}
		}
		got := tr.Result()
		if got.Totals.Duplicates != 0 {
			t.Errorf("%v: a file read twice: %+v", operands, got.Totals)
		}
		sameAnswers(t, filepath.Base(operands[0]), want, got)
	}
}
