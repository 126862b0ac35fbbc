package examples

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// covered maps every file under examples/ to the test that keeps it true. A
// new example file fails this test until a test covers it.
var covered = map[string]string{
	"examples/paddle/Dockerfile":            "TestPodman (podman: built and run by a real engine), TestDockerfileGoImageIsNewEnough",
	"examples/paddle/train.py":              "TestTrainingScriptsCompile, TestPodman/default_CMD",
	"examples/pytorch/Dockerfile":           "TestPodman (podman)",
	"examples/pytorch/train.py":             "TestTrainingScriptsCompile, TestPodman/default_CMD",
	"examples/kubernetes/job.yaml":          "TestKubernetesJob",
	"examples/kubernetes/paddlejob.yaml":    "TestKubeflowJobs",
	"examples/kubernetes/pytorchjob.yaml":   "TestKubeflowJobs",
	"examples/kubernetes/README.md":         "TestKubernetesJob, TestKubeflowJobs",
	"examples/slurm/train-pyxis.sbatch":     "TestShellScriptsParseAndPassShellcheck, TestSlurmScriptsReachTheRecord",
	"examples/slurm/train-apptainer.sbatch": "TestShellScriptsParseAndPassShellcheck, TestSlurmScriptsReachTheRecord",
	"examples/logging/fluent-bit.conf":      "TestFluentBitRoutesTheProvenanceLine",
	"examples/logging/parsers.conf":         "TestFluentBitRoutesTheProvenanceLine",
	"examples/logging/aborted-runs.logql":   "TestLogQLFindsTheAbort",
}

func TestEveryExampleIsCovered(t *testing.T) {
	var files []string
	err := filepath.WalkDir(filepath.Join(repo(t), "examples"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(repo(t), p)
		files = append(files, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	seen := map[string]bool{}
	for _, f := range files {
		seen[f] = true
		if covered[f] == "" {
			t.Errorf("%s is not covered by any test: add a test and list it in covered", f)
		}
	}
	for f := range covered {
		if !seen[f] {
			t.Errorf("covered lists %s, which does not exist", f)
		}
	}
}
