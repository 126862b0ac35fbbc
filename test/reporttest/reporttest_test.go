package reporttest_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/report/logs"
	"github.com/gpu-preflight/gpu-preflight/report/store"
	"github.com/gpu-preflight/gpu-preflight/test/reporttest"
)

// Every output is made from one record (or the raw findings); none may carry
// a planted secret.
func TestNoPlantedSecretReachesAnyOutput(t *testing.T) {
	in := reporttest.Inputs()
	r := report.New(in)
	outputs := map[string][]byte{}

	b, err := store.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	outputs["record JSON"] = b

	dir := t.TempDir()
	path, err := store.Write(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	outputs["record file"] = reporttest.ReadFile(t, path)

	for _, format := range []string{logs.FormatJSON, logs.FormatConsole} {
		var lines bytes.Buffer
		l, err := logs.New(&lines, format, "debug")
		if err != nil {
			t.Fatal(err)
		}
		logs.Findings(l, in.Findings) // the raw findings, as the caller has them
		if err := logs.Record(l, r); err != nil {
			t.Fatal(err)
		}
		outputs["log "+format] = lines.Bytes()
	}

	msg := report.TerminationMessage(in.Findings, in.Decision)
	outputs["termination message"] = []byte(msg)
	tpath := dir + "/termination-log"
	if err := store.WriteTermination(tpath, msg, true); err != nil {
		t.Fatal(err)
	}
	outputs["termination file"] = reporttest.ReadFile(t, tpath)

	var human bytes.Buffer
	if err := report.Human(&human, r); err != nil {
		t.Fatal(err)
	}
	outputs["human report"] = human.Bytes()

	names := make([]string, 0, len(outputs))
	for name := range outputs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		out := outputs[name]
		if len(out) == 0 {
			t.Errorf("%s is empty", name)
		}
		for _, s := range reporttest.Secrets {
			if bytes.Contains(out, []byte(s)) {
				t.Errorf("%s contains planted secret %q:\n%s", name, s, out)
			}
		}
	}
}
